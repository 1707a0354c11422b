"""DocScope scorers (spec §2): pages, regions (judge and geometry), facts, answers,
evidence-chain completeness and evidence-layout factors.

Every scorer here reads only (trajectory, sample) and, for judge scorers, the judge context;
modules import no model libraries.
"""
