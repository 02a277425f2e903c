from callswarm.cli import main

main()
