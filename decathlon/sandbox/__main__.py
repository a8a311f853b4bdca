from decathlon.sandbox.cli import main

main()
