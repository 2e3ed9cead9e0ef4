"""Make the analysis's records frozen for the whole test run (and the servers and
command lines it starts): a change to a fact after it is made raises here."""
import os

os.environ["AUTOGRAD_LSP_FROZEN_RECORDS"] = "1"
