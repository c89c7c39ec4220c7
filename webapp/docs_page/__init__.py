"""The interactive API reference page (index.html, init.js): data read by webapp.docs."""
