package policy

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseManyPipelines: decoding is linear in the number of
// pipelines; ns/pipeline stays flat as the count doubles (it grew with
// the count when YAML's duplicate-key check compared every key with every
// other).
func BenchmarkParseManyPipelines(b *testing.B) {
	for _, n := range []int{2000, 4000, 8000, 16000} {
		data := manyPipelines(n)
		b.Run(fmt.Sprintf("pipelines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseRepoConfig(".kilroy/config.yml", data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pipeline")
		})
	}
}

// BenchmarkParseManyVariables: the same for the variables of an env
// override, the other mapping whose keys a file chooses freely.
func BenchmarkParseManyVariables(b *testing.B) {
	for _, n := range []int{2000, 4000, 8000, 16000} {
		var s strings.Builder
		s.WriteString("version: 1\nartifact_policy:\n  env:\n    overrides:\n      go:\n")
		for i := range n {
			fmt.Fprintf(&s, "        V%d: x\n", i)
		}
		data := []byte(s.String())
		b.Run(fmt.Sprintf("variables=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseRepoConfig(".kilroy/config.yml", data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/variable")
		})
	}
}
