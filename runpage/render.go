package runpage

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

var funcs = template.FuncMap{
	"duration": formatDuration,
	"markdown": Markdown,
	"refresh":  func() int { return refreshSeconds },
	"short":    func(sha string) string { return Commit{SHA: sha}.Short() },
	"int64":    func(n int) int64 { return int64(n) },
	"logid":    LogID,
	"livejs":   func() string { return LiveScriptPath },
	// repeats: a node's reason the run's reason already shows in full (the
	// failed node's, usually) is not printed twice.
	"repeats": func(run, node string) bool { return node != "" && strings.Contains(run, node) },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("15:04:05.000")
	},
	"bytes": func(n int64) string {
		switch {
		case n >= 1<<20:
			return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
		case n >= 1<<10:
			return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
		}
		return fmt.Sprintf("%d bytes", n)
	},
}

// formatDuration rounds to what a reader compares: milliseconds below a
// second, then tenths, then whole seconds.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// refreshSeconds is how often a live run's page reloads itself.
const refreshSeconds = 10

// pageTemplate is the whole page. html/template escapes every value by
// its context, links included (a commit URL that is not http(s) is
// replaced), so nothing from the run directory can inject markup; the
// report goes through Markdown, which escapes what it renders.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Live}}<noscript><meta http-equiv="refresh" content="{{refresh}}"></noscript>{{end}}
{{if and .Live .LiveURL}}<script src="{{livejs}}" defer></script>{{end}}
<title>{{with .Pipeline}}{{.}} · {{end}}run {{.ID}} · kilroy</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { text-align: left; padding: .3em .8em; border-bottom: 1px solid #d0d7de; vertical-align: top; }
td.num, th.num { text-align: right; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
code, pre { font-family: ui-monospace, monospace; font-size: 90%; }
blockquote { margin: 1em 0; padding: 0 1em; border-left: .25em solid #d0d7de; color: #59636e; }
section.report { border: 1px solid #d0d7de; border-radius: 6px; padding: 0 1.2em; }
summary { cursor: pointer; }
.status-success { color: #1a7f37; } .status-fail { color: #cf222e; } .status-running, .status-retrying, .status-interrupted { color: #9a6700; }
.muted { color: #656d76; }
</style>
</head>
<body{{if and .Live .LiveURL}} data-live="{{.LiveURL}}" data-state="{{.StateKey}}"{{end}}>
<h1>{{with .Pipeline}}{{.}}: {{end}}run <code>{{.ID}}</code></h1>
<table id="run-head">
<tr><th>Status</th><td class="status-{{.Status}}">{{.Status}}{{if .Live}} <span class="muted" id="live-note">· this page reloads every {{refresh}} s</span>{{end}}</td></tr>
{{with .Reason}}<tr><th>Reason</th><td>{{.}}</td></tr>{{end}}
{{with .Source}}{{if .Repo}}<tr><th>Repository</th><td>{{if .RepoURL}}<a href="{{.RepoURL}}">{{.Repo}}</a>{{else}}{{.Repo}}{{end}}</td></tr>{{end}}
{{if .PR}}<tr><th>Pull request</th><td>{{if .PRURL}}<a href="{{.PRURL}}">#{{.PR}}</a>{{else}}#{{.PR}}{{end}}</td></tr>{{end}}
{{if .HeadSHA}}<tr><th>Commit tested</th><td>{{if .HeadURL}}<a href="{{.HeadURL}}"><code>{{short .HeadSHA}}</code></a>{{else}}<code>{{short .HeadSHA}}</code>{{end}}</td></tr>{{end}}{{end}}
{{with duration .Total}}<tr><th>{{if $.Live}}Time so far{{else}}Total time{{end}}</th><td>{{.}}</td></tr>{{end}}
{{with .Branch}}<tr><th>Run branch</th><td><code>{{.}}</code></td></tr>{{end}}
{{with .BaseSHA}}<tr><th>Base commit</th><td><code>{{.}}</code></td></tr>{{end}}
{{with .Image}}{{if .Ref}}<tr><th>Image</th><td><code>{{.Ref}}</code>{{with .Digest}} @ <code>{{.}}</code>{{end}}</td></tr>{{end}}{{end}}
{{with .Commit.SHA}}<tr><th>Last checkpoint</th><td>{{template "commit" $.Commit}}</td></tr>{{end}}
{{with when .UpdatedAt}}<tr><th>Updated</th><td>{{.}}</td></tr>{{end}}
</table>
{{with .Problems}}<h2>Problems reading this run</h2>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}

{{with .Report}}<details><summary>The check run's report: the same nodes and failure as below, as GitHub shows them</summary>
<section class="report">
{{markdown .}}
</section></details>{{end}}

<div id="live">
<h2>Nodes</h2>
{{if .Nodes}}<table>
<thead><tr><th>Node</th><th>Status</th><th class="num">Attempts</th><th class="num">Duration</th><th>Checkpoint</th><th>Reason</th></tr></thead>
<tbody>
{{range .Nodes}}<tr>
<td><a href="#node-{{.Dir}}"><code>{{.ID}}</code></a>{{with .Label}} {{.}}{{end}}</td>
<td class="status-{{.Status}}">{{.Status}}</td>
<td class="num">{{if .Attempts}}{{.Attempts}}{{end}}</td>
<td class="num">{{duration .Duration}}</td>
<td>{{if .Commit.SHA}}{{template "commit" .Commit}}{{end}}</td>
<td>{{if not (repeats $.Reason .Reason)}}{{.Reason}}{{end}}</td>
</tr>
{{end}}</tbody>
</table>{{else}}<p class="muted">No node has started yet.</p>{{end}}
{{template "usage" .}}

{{if .Nodes}}<h2>Logs</h2>
{{range .Nodes}}<h3 id="node-{{.Dir}}"><code>{{.ID}}</code> <span class="status-{{.Status}}">{{.Status}}</span></h3>
{{$open := or (eq .Status "fail") (eq .Status "running")}}{{$dir := .Dir}}{{range .Written}}<details id="d-{{logid $dir .Name}}"{{if $open}} open{{end}}><summary><code>{{.Name}}</code> <span class="muted">{{bytes (len .Text | int64)}}</span></summary>
{{if .Omitted}}<p class="muted">… {{bytes .Omitted}} earlier not shown</p>{{end}}
<pre id="{{logid $dir .Name}}">{{.Text}}</pre>
</details>
{{end}}{{with .Empty}}<p class="muted">Empty: {{range $i, $n := .}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}</p>
{{end}}{{if not .Logs}}<p class="muted">No logs.</p>
{{end}}{{end}}{{end}}

<h2>Progress</h2>
{{if .Events}}<details><summary>{{len .Events}} engine events{{if .EventsOmitted}} ({{.EventsOmitted}} earlier not shown){{end}}</summary>
<table>
<thead><tr><th>Time</th><th>Event</th><th>Node</th><th>Status</th><th>Detail</th></tr></thead>
<tbody>
{{range .Events}}<tr><td>{{clock .Time}}</td><td>{{.Type}}</td><td>{{with .Node}}<code>{{.}}</code>{{end}}</td><td>{{.Status}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody>
</table>
</details>{{else}}<p class="muted">No progress recorded yet.</p>{{end}}
</div>
</body>
</html>
{{define "commit"}}{{if .URL}}<a href="{{.URL}}"><code>{{.Short}}</code></a>{{else}}<code>{{.Short}}</code>{{end}}{{end}}
`
