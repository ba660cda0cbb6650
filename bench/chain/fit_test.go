package chain

import (
	"math"
	"testing"
)

// TestFitGrowth checks the fit BenchmarkChainLength quotes on intervals
// whose growth is known, with a spike in every run as real runs have.
func TestFitGrowth(t *testing.T) {
	for _, want := range []float64{1, 1.05, 0.9, 1.5} {
		var runs [][]float64
		for r := range 3 {
			iv := make([]float64, lengthNodes)
			for i := range iv {
				// 6 ms at node 10, want times that at node 200.
				iv[i] = 6 * math.Pow(want, float64(i+1-10)/190)
			}
			iv[r*50] *= 3
			runs = append(runs, iv)
		}
		if got := fitGrowth(runs); math.Abs(got-want) > 0.01 {
			t.Errorf("growth %.3f: the fit gave %.3f", want, got)
		}
	}
}
