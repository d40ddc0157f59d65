"""External knowledge sources (PubMed, NIH RePORTER, web pages, biomedical KGs) and sample data."""
