"""Page-level indexes (BM25, dense FAISS, ColPali multi-vector), savable with a manifest."""
