from decathlon.cli.main import main

main()
