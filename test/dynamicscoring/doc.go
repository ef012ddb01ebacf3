// Package dynamicscoring tests dynamic scoring end to end: a real hub and two spokes, a real
// Prometheus per spoke scraping a test exporter of GPU utilization, test scorers (good and
// misbehaving), the built-in add-on dynamic-scoring, and a placement that ranks by its scores.
package dynamicscoring
