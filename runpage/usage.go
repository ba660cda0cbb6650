package runpage

import (
	"html/template"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// Agent usage on the run page: progress.ndjson carries every agent
// attempt's usage; the page sums it per node and for the run and shows a
// table like the summary check's.

// addUsage counts an attempt event's usage.
func (b *builder) addUsage(n *Node, ev progressEvent) {
	if ev.Usage == nil {
		return
	}
	n.Usage.Add(*ev.Usage)
	b.run.Usage.Add(*ev.Usage)
}

// UsageNodes are the nodes whose agents used anything.
func (r *Run) UsageNodes() []Node {
	var out []Node
	for _, n := range r.Nodes {
		if n.Usage.Attempts > 0 {
			out = append(out, n)
		}
	}
	return out
}

// usageTemplate is the page's "Agent usage" section.
const usageTemplate = `{{define "usage"}}{{if .Usage.Attempts}}<h2>Agent usage</h2>
<table>
<thead><tr><th>Node</th><th class="num">Attempts</th><th class="num">Input</th><th class="num">Cache read</th><th class="num">Cache write</th><th class="num">Output</th><th class="num">Cost</th></tr></thead>
<tbody>
{{range .UsageNodes}}<tr><td><code>{{.ID}}</code></td>{{template "usagecells" .Usage}}</tr>
{{end}}<tr><th>Total</th>{{template "usagecells" .Usage}}</tr>
</tbody>
</table>
{{if .Usage.Uncosted}}<p class="muted">{{.Usage.Uncosted}} attempt(s) of unknown cost: their backend reports none and has no prices for the model.</p>{{end}}
{{end}}{{end}}
{{define "usagecells"}}<td class="num">{{.Attempts}}</td><td class="num">{{tokens .InputTokens}}</td><td class="num">{{tokens .CacheReadTokens}}</td><td class="num">{{tokens .CacheWriteTokens}}</td><td class="num">{{tokens .OutputTokens}}</td><td class="num">{{cost .}}</td>{{end}}`

// costText is a total's cost, or what it leaves out.
func costText(t attractor.UsageTotal) string {
	switch {
	case t.Uncosted == t.Attempts:
		return "unknown"
	case t.Uncosted > 0:
		return attractor.USD(t.CostUSD) + " + unknown"
	}
	return attractor.USD(t.CostUSD)
}

// usageFuncs are the functions usageTemplate calls.
var usageFuncs = template.FuncMap{"tokens": attractor.Thousands, "cost": costText}
