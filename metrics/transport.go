package metrics

import "net/http"

// RoundTripper wraps next (http.DefaultTransport when nil) so that every
// request it sends is counted in kilroy_github_api_requests_total by the
// status code of the answer, or "error" when none came. Wrap the transport
// under the GitHub client's retries, so each attempt is seen.
func (m *Metrics) RoundTripper(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return countingTransport{m: m, next: next}
}

type countingTransport struct {
	m    *Metrics
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	label := "error"
	if err == nil {
		label = statusLabel(resp.StatusCode)
	}
	t.m.githubCalls.WithLabelValues(label).Inc()
	return resp, err
}
