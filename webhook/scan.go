package webhook

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// A pull_request payload is some 28 KB of which the webhook reads a few
// dozen fields, and encoding/json spent most of a delivery's CPU checking
// and skipping the rest. So pull_request payloads are first scanned with
// gjson, which skips unused values cheaply, into the same payload structs.
// The scan only ever says "this is exactly what encoding/json would give"
// or "not sure": on any doubt (a key that differs from ours only in case or
// is repeated, a string with escapes or invalid UTF-8, a number that is not
// a plain integer, a value of the wrong type, JSON that is not valid)
// encoding/json decodes the payload and reports what is wrong. A
// differential fuzz test holds the two to the same answers.

// scanner walks the objects of one payload; ok turns false at the first
// doubt and stays false.
type scanner struct{ ok bool }

// object calls member for each member of v (an object, or null: nothing)
// whose key is one of known. Another key must not match a known one but
// for case (encoding/json would take it), and no known key may come twice
// (encoding/json would take the last, merging objects).
func (s *scanner) object(v gjson.Result, known []string, member func(key string, v gjson.Result)) {
	if !s.ok || v.Type == gjson.Null {
		return
	}
	if !v.IsObject() {
		s.ok = false
		return
	}
	var seen uint64
	v.ForEach(func(k, val gjson.Result) bool {
		if k.Type != gjson.String || strings.IndexByte(k.Raw, '\\') >= 0 {
			s.ok = false
			return false
		}
		i := indexFold(known, k.Str)
		switch {
		case i < 0:
			return true
		case known[i] != k.Str || seen&(1<<i) != 0:
			s.ok = false
		default:
			seen |= 1 << i
			member(k.Str, val)
		}
		return s.ok
	})
}

// indexFold is the index of key in known, ignoring case; -1 if absent.
func indexFold(known []string, key string) int {
	for i, k := range known {
		if strings.EqualFold(k, key) {
			return i
		}
	}
	return -1
}

// str stores a string value; null leaves dst alone, as encoding/json does.
func (s *scanner) str(v gjson.Result, dst *string) {
	switch {
	case v.Type == gjson.Null:
	case v.Type != gjson.String || strings.IndexByte(v.Raw, '\\') >= 0 || !utf8.ValidString(v.Str):
		s.ok = false
	default:
		*dst = v.Str
	}
}

// integer stores a plain integer; a fraction or exponent is a doubt.
func (s *scanner) integer(v gjson.Result, dst *int64) {
	if v.Type == gjson.Null {
		return
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	if v.Type != gjson.Number || err != nil {
		s.ok = false
		return
	}
	*dst = n
}

func (s *scanner) integerInt(v gjson.Result, dst *int) {
	n := int64(*dst)
	s.integer(v, &n)
	*dst = int(n)
}

func (s *scanner) boolean(v gjson.Result, dst *bool) {
	switch v.Type {
	case gjson.Null:
	case gjson.True, gjson.False:
		*dst = v.Type == gjson.True
	default:
		s.ok = false
	}
}

// scanPullRequest fills p from payload; false means "decode it with
// encoding/json instead".
func scanPullRequest(payload []byte, p *pullRequestPayload) bool {
	if !gjson.ValidBytes(payload) {
		return false
	}
	s := &scanner{ok: true}
	s.object(gjson.ParseBytes(payload), []string{"action", "repository", "installation", "sender", "pull_request"},
		func(key string, v gjson.Result) {
			switch key {
			case "pull_request":
				p.PullRequest = s.pull(v)
			default:
				s.envelope(key, v, &p.envelope)
			}
		})
	return s.ok
}

func (s *scanner) envelope(key string, v gjson.Result, e *envelope) {
	switch key {
	case "action":
		s.str(v, &e.Action)
	case "repository":
		e.Repository = s.repoPtr(v)
	case "installation":
		if v.Type != gjson.Null {
			e.Installation = &ghInstallation{}
			s.installation(v, e.Installation)
		} else {
			e.Installation = nil
		}
	case "sender":
		if v.Type != gjson.Null {
			e.Sender = &ghUser{}
			s.user(v, e.Sender)
		} else {
			e.Sender = nil
		}
	}
}

func (s *scanner) pull(v gjson.Result) *ghPull {
	if v.Type == gjson.Null {
		return nil
	}
	pr := &ghPull{}
	s.object(v, []string{"number", "draft", "user", "head", "base"}, func(key string, v gjson.Result) {
		switch key {
		case "number":
			s.integerInt(v, &pr.Number)
		case "draft":
			s.boolean(v, &pr.Draft)
		case "user":
			s.user(v, &pr.User)
		case "head":
			s.branch(v, &pr.Head)
		case "base":
			s.branch(v, &pr.Base)
		}
	})
	return pr
}

func (s *scanner) branch(v gjson.Result, b *ghBranch) {
	s.object(v, []string{"ref", "sha", "repo"}, func(key string, v gjson.Result) {
		switch key {
		case "ref":
			s.str(v, &b.Ref)
		case "sha":
			s.str(v, &b.SHA)
		case "repo":
			b.Repo = s.repoPtr(v)
		}
	})
}

func (s *scanner) repoPtr(v gjson.Result) *ghRepo {
	if v.Type == gjson.Null {
		return nil
	}
	r := &ghRepo{}
	s.object(v, []string{"id", "name", "full_name", "owner", "clone_url", "default_branch"},
		func(key string, v gjson.Result) {
			switch key {
			case "id":
				s.integer(v, &r.ID)
			case "name":
				s.str(v, &r.Name)
			case "full_name":
				s.str(v, &r.FullName)
			case "owner":
				s.user(v, &r.Owner)
			case "clone_url":
				s.str(v, &r.CloneURL)
			case "default_branch":
				s.str(v, &r.DefaultBranch)
			}
		})
	return r
}

func (s *scanner) user(v gjson.Result, u *ghUser) {
	s.object(v, []string{"id", "login", "type"}, func(key string, v gjson.Result) {
		switch key {
		case "id":
			s.integer(v, &u.ID)
		case "login":
			s.str(v, &u.Login)
		case "type":
			s.str(v, &u.Type)
		}
	})
}

func (s *scanner) installation(v gjson.Result, in *ghInstallation) {
	s.object(v, []string{"id", "app_id", "account"}, func(key string, v gjson.Result) {
		switch key {
		case "id":
			s.integer(v, &in.ID)
		case "app_id":
			s.integer(v, &in.AppID)
		case "account":
			s.user(v, &in.Account)
		}
	})
}
