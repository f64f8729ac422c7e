"""The rooms world (Cosmic): two agents with egocentric views of a room answer spatial questions by chatting."""
