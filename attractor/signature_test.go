package attractor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeSignature(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Build FAILED  at\tcommit 3f9a2b1c4d", "build failed at commit <hex>"},
		{"main.go:12:5: undefined: Foo", "main.go:<n>:<n>: undefined: foo"},
		{"took 1500ms (pid 4242)", "took <n>ms (pid <n>)"},
		{"cafe 1234567 deadbeef", "cafe <hex> <hex>"},
		{"environmental_tooling_blocks", "environmental_tooling_blocks"},
	} {
		if got := NormalizeSignature(tc.in); got != tc.want {
			t.Errorf("NormalizeSignature(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInferFailureClass(t *testing.T) {
	for _, tc := range []struct {
		reason string
		want   FailureClass
	}{
		{"dial tcp: connection refused", ClassTransientInfra},
		{"HTTP 429 Too Many Requests", ClassTransientInfra},
		{"agent hit its turn limit", ClassBudgetExhausted},
		{"context canceled", ClassCanceled},
		{"undefined: Foo", ClassDeterministic},
		{"", ClassDeterministic},
	} {
		if got := InferFailureClass(tc.reason); got != tc.want {
			t.Errorf("InferFailureClass(%q) = %s, want %s", tc.reason, got, tc.want)
		}
	}
}

func TestFinishFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Outcome
		want Outcome
	}{
		{"meta wins", Outcome{Status: StatusFail, FailureReason: "timeout", FailureClass: ClassDeterministic,
			Meta: map[string]any{"failure_class": "transient", "failure_signature": "Sig 42"}},
			Outcome{Status: StatusFail, FailureReason: "timeout", FailureClass: ClassTransientInfra, FailureSignature: "sig <n>",
				Meta: map[string]any{"failure_class": "transient", "failure_signature": "Sig 42"}}},
		{"field, then reason", Outcome{Status: StatusRetry, FailureReason: "Rate limit at 12:00"},
			Outcome{Status: StatusRetry, FailureReason: "Rate limit at 12:00", FailureClass: ClassTransientInfra, FailureSignature: "rate limit at <n>:<n>"}},
		{"success cleared", Outcome{Status: StatusSuccess, FailureClass: ClassDeterministic, FailureSignature: "x"}, Outcome{Status: StatusSuccess}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(finishFailure(tc.in), tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
