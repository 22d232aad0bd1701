
fixeddepth)ќЉёвMbP?1-Cыт6?9ќЉёвMb`П