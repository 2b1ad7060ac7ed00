"""Token masks over the recognizer: trie walks, slices, caches."""
