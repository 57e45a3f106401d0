"""A real agent harness at no model cost: a scripted OpenAI-compatible model server and its transcripts."""
