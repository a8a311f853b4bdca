import sys

from mocks.services.supervisor import main

sys.exit(main())
