"""Task verifier entry: runs orharbor's standard-library verifier shipped beside it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orharbor.verifiers.main import main  # noqa: E402

sys.exit(main())
