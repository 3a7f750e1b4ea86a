"""Computations over the conversation model that readers and checks both need.

Pairing calls with results, where a history ends, the clean-file screen: a reader needs
them to build or screen a conversation, a check to judge it.  They sit below both, so
neither readers nor checks import the other.
"""
