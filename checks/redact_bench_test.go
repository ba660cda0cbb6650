package checks

import "testing"

// BenchmarkRedact redacts a 1 MB log with a few exact values, the work
// every rendered output tail costs.
func BenchmarkRedact(b *testing.B) {
	log := bigLog(1 << 20)
	r := NewRedactor("s3cr3t-webhook-value", pemKey)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		r.Redact(log)
	}
}
