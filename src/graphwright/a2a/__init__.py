"""graphwright as an A2A v1.0 agent (a2a-sdk): its card, an executor over the chat service, task
storage on graphwright's database, bearer-token auth, and a client for remote A2A agents."""
