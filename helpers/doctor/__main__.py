"""``python -m helpers.doctor``: is this machine ready for the course? (lesson 00)"""

import sys

from helpers.doctor import main

sys.exit(main())
