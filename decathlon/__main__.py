from decathlon.cli import main

main()
