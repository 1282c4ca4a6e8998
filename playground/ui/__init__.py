"""The live Textual app: it draws the cluster's trace stream and sends commands back."""
