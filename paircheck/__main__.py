from paircheck.cli import main

main()
