"""Models: the SmolLM2-135M-Instruct conversion, the tiny from-scratch policy, and its SFT job."""
