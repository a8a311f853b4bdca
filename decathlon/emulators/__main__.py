import sys

from decathlon.emulators.supervisor import main

sys.exit(main())
