from task_api.cli import main

main()
