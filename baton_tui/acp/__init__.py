"""`baton acp`: Baton as an Agent Client Protocol agent for editors (agent.py), and the ACP
shapes it shows them (words.py)."""
