import os
import sys

# ops tests import their helpers module (ops_helpers.py) from this folder
sys.path.insert(0, os.path.dirname(__file__))
