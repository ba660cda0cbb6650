package webhook

import "unicode/utf8"

// A pull_request payload is some 28 KB of which the webhook reads a few
// dozen fields, and encoding/json spent most of a delivery's CPU checking
// and skipping the rest. So pull_request payloads are first scanned in one
// pass by jscan (jscan.go), which validates the whole document but skips
// unused values cheaply, into the same payload structs.
// The scan only ever says "this is exactly what encoding/json would give"
// or "not sure": on any doubt (a key with escapes, or that differs from
// ours only in case, or is repeated; a string with escapes or invalid
// UTF-8; a number that is not a plain integer; a value of the wrong type;
// JSON that is not valid or is nested deeper than encoding/json allows)
// encoding/json decodes the payload and reports what is wrong.
// Differential fuzz tests hold the two to the same answers:
// FuzzScanPullRequest for the payload read, FuzzJScanValid for which
// documents are valid JSON at all.

// The keys read from each object; anything else is validated and skipped.
var (
	pullRequestKeys  = []string{"action", "repository", "installation", "sender", "pull_request"}
	pullKeys         = []string{"number", "draft", "user", "head", "base"}
	branchKeys       = []string{"ref", "sha", "repo"}
	repoKeys         = []string{"id", "name", "full_name", "owner", "clone_url", "default_branch"}
	userKeys         = []string{"id", "login", "type"}
	installationKeys = []string{"id", "app_id", "account"}
)

// scanPullRequest fills p from payload; false means "decode it with
// encoding/json instead".
func scanPullRequest(payload []byte, p *pullRequestPayload) bool {
	s := &jscan{buf: payload}
	return s.document(func() bool {
		return s.members(pullRequestKeys, func(key string) bool {
			switch key {
			case "action":
				return s.str(&p.Action)
			case "repository":
				return s.repo(&p.Repository)
			case "installation":
				return s.installation(&p.Installation)
			case "sender":
				return s.userPtr(&p.Sender)
			default: // pull_request
				return s.pull(&p.PullRequest)
			}
		})
	})
}

// str stores a string without escapes and in valid UTF-8, which is then
// the very bytes encoding/json would give.
func (s *jscan) str(dst *string) bool {
	if s.null() {
		return true
	}
	raw, ok := s.plainString()
	if !ok || !utf8.Valid(raw) {
		return false
	}
	*dst = string(raw)
	return true
}

// int64Val stores a plain integer; a fraction or exponent is a doubt.
func (s *jscan) int64Val(dst *int64) bool {
	if s.null() {
		return true
	}
	n, ok := s.integer()
	if ok {
		*dst = n
	}
	return ok
}

// intVal is int64Val for an int, which encoding/json also rejects past an
// int's range where an int is narrower.
func (s *jscan) intVal(dst *int) bool {
	n := int64(*dst)
	if !s.int64Val(&n) || n != int64(int(n)) {
		return false
	}
	*dst = int(n)
	return true
}

func (s *jscan) boolVal(dst *bool) bool {
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case 't':
		if s.literal("true") {
			*dst = true
			return true
		}
	case 'f':
		if s.literal("false") {
			*dst = false
			return true
		}
	}
	return false
}

func (s *jscan) pull(dst **ghPull) bool {
	if s.null() {
		*dst = nil
		return true
	}
	pr := &ghPull{}
	*dst = pr
	return s.members(pullKeys, func(key string) bool {
		switch key {
		case "number":
			return s.intVal(&pr.Number)
		case "draft":
			return s.boolVal(&pr.Draft)
		case "user":
			return s.user(&pr.User)
		case "head":
			return s.branch(&pr.Head)
		default: // base
			return s.branch(&pr.Base)
		}
	})
}

func (s *jscan) branch(b *ghBranch) bool {
	return s.members(branchKeys, func(key string) bool {
		switch key {
		case "ref":
			return s.str(&b.Ref)
		case "sha":
			return s.str(&b.SHA)
		default: // repo
			return s.repo(&b.Repo)
		}
	})
}

func (s *jscan) repo(dst **ghRepo) bool {
	if s.null() {
		*dst = nil
		return true
	}
	r := &ghRepo{}
	*dst = r
	return s.members(repoKeys, func(key string) bool {
		switch key {
		case "id":
			return s.int64Val(&r.ID)
		case "name":
			return s.str(&r.Name)
		case "full_name":
			return s.str(&r.FullName)
		case "owner":
			return s.user(&r.Owner)
		case "clone_url":
			return s.str(&r.CloneURL)
		default: // default_branch
			return s.str(&r.DefaultBranch)
		}
	})
}

func (s *jscan) userPtr(dst **ghUser) bool {
	if s.null() {
		*dst = nil
		return true
	}
	*dst = &ghUser{}
	return s.user(*dst)
}

func (s *jscan) user(u *ghUser) bool {
	return s.members(userKeys, func(key string) bool {
		switch key {
		case "id":
			return s.int64Val(&u.ID)
		case "login":
			return s.str(&u.Login)
		default: // type
			return s.str(&u.Type)
		}
	})
}

func (s *jscan) installation(dst **ghInstallation) bool {
	if s.null() {
		*dst = nil
		return true
	}
	in := &ghInstallation{}
	*dst = in
	return s.members(installationKeys, func(key string) bool {
		switch key {
		case "id":
			return s.int64Val(&in.ID)
		case "app_id":
			return s.int64Val(&in.AppID)
		default: // account
			return s.user(&in.Account)
		}
	})
}
