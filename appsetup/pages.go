package appsetup

import "html/template"

// The pages. html/template escapes every value: the manifest travels in an
// attribute, as JSON text.
const pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kilroy-bot setup</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42em;margin:3em auto;padding:0 1em}
code{background:#f3f3f3;padding:0 .2em}button{font-size:1em;padding:.5em 1.2em}</style></head><body>`

var formPage = template.Must(template.New("form").Parse(pageHead + `
<h1>Register kilroy-bot as a GitHub App</h1>
<p>The button below takes you to GitHub to create the App <b>{{.Name}}</b>
{{- if .Org}} for the organisation <b>{{.Org}}</b>{{else}} for your account{{end}}.
You may change its name there. GitHub then sends you back here and the App's id, key and
webhook secret are stored on this machine.</p>
<p>Webhooks go to <code>{{.Hook}}</code>. Events: {{range $i, $e := .Events}}{{if $i}}, {{end}}<code>{{$e}}</code>{{end}}.</p>
<p>Permissions, each for one job:</p>
<ul>{{range $k, $v := .Perms}}<li><code>{{$k}}: {{$v}}</code>{{with index $.Why $k}}: {{.}}{{end}}</li>{{end}}</ul>
<form action="{{.Action}}" method="post">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<button type="submit">Create the GitHub App</button>
</form>
</body></html>
`))

var donePage = template.Must(template.New("done").Parse(pageHead + `
<h1>The App {{.Result.Slug}} is registered</h1>
<p>Its id, private key and webhook secret are stored in <code>{{.Dir}}</code>.</p>
<p>Next, <a href="{{.Result.InstallURL}}">install it on your repositories</a>, then start
the bot with the command printed in your terminal. You can close this page.</p>
</body></html>
`))

var errorPage = template.Must(template.New("error").Parse(pageHead + `
<h1>Setup did not finish</h1>
<p>{{.}}</p>
</body></html>
`))

// permissionWhy says what the bot does with each permission it asks for,
// so nobody grants write access without knowing why.
func permissionWhy() map[string]string {
	return map[string]string{
		"checks":        "report every run and verify step as a check run with annotations on the offending lines",
		"contents":      "fetch the pull request's code and push the run branches (kilroy/run/PIPELINE/RUN_ID) that hold each run's checkpoint commits; it never pushes to your branches",
		"pull_requests": "read a pull request's head, base and changed files to decide which pipelines run",
		"issues":        "answer /kilroy comments on pull requests (GitHub files those comments under issues)",
		"metadata":      "required of every App: the repository's name and settings",
		"merge_queues":  "receive merge_group events, so the required kilroy checks run on a merge queue's commits and the queue can merge",
	}
}
