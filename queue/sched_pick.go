package queue

import (
	"cmp"
	"fmt"
	"slices"
)

// Caps bound how many runs go at once across every process sharing the
// queue; zero means no bound. Runs over a cap stay queued.
type Caps struct {
	// PerInstallation bounds the runs of one GitHub App installation.
	PerInstallation int
	// PerRepository bounds the runs of one repository.
	PerRepository int
}

// DefaultCaps are the caps of a process with the given number of workers
// when the operator sets none: an installation may hold all workers but
// one, and a repository half of them (rounded up), each at least one.
// Runs are not preempted, so the fair pick alone cannot help a tenant who
// arrives after another's long runs took every worker (three pull
// requests of one repository kept another organisation's one-node run
// waiting a minute on two workers). The price is a worker left idle while
// one installation alone has work queued.
func DefaultCaps(workers int) Caps {
	return Caps{PerInstallation: max(1, workers-1), PerRepository: max(1, (workers+1)/2)}
}

// schedGroup is the queued, not yet dispatched runs of one repository:
// the scheduler takes runs of a repository oldest first, so only the
// oldest one's time matters.
type schedGroup struct {
	Installation int64
	Repo         string
	Oldest       int64 // queued_at of the oldest run, Unix milliseconds
}

// schedSnapshot is what the picker decides on: the groups with runs
// waiting, and what each installation and repository has going (running,
// or dispatched to a worker and not yet started).
type schedSnapshot struct {
	Groups   []schedGroup
	BusyInst map[int64]int
	BusyRepo map[string]int
	// LastStarted is when each installation last had a run dispatched,
	// Unix milliseconds; absent means never.
	LastStarted map[int64]int64
}

// pick chooses the repository whose oldest queued run goes next: among
// the groups under both caps, the installation with the fewest runs going,
// then the one started least recently, then the one with the oldest run;
// within it, the repository with the oldest run. ok is false when nothing
// may start.
func pick(s schedSnapshot, caps Caps) (schedGroup, bool) {
	var best schedGroup
	found := false
	for _, g := range s.Groups {
		if capReached(s, g, caps) != "" {
			continue
		}
		if !found || s.before(g, best) {
			best, found = g, true
		}
	}
	return best, found
}

// before orders two eligible groups by the picker's rule.
func (s schedSnapshot) before(a, b schedGroup) bool {
	if a.Installation != b.Installation {
		if c := cmp.Compare(s.BusyInst[a.Installation], s.BusyInst[b.Installation]); c != 0 {
			return c < 0
		}
		if c := cmp.Compare(s.LastStarted[a.Installation], s.LastStarted[b.Installation]); c != 0 {
			return c < 0
		}
	}
	if a.Oldest != b.Oldest {
		return a.Oldest < b.Oldest
	}
	if a.Installation != b.Installation {
		return a.Installation < b.Installation
	}
	return a.Repo < b.Repo
}

// capReached says which cap keeps g's runs waiting, or "" when none does.
func capReached(s schedSnapshot, g schedGroup, caps Caps) string {
	if n := s.BusyRepo[g.Repo]; caps.PerRepository > 0 && n >= caps.PerRepository {
		return fmt.Sprintf("%s has %s going, this server's limit per repository (limits.max_runs_per_repository)",
			g.Repo, runsWord(n))
	}
	if n := s.BusyInst[g.Installation]; caps.PerInstallation > 0 && n >= caps.PerInstallation {
		return fmt.Sprintf("this installation has %s going, this server's limit per installation (limits.max_runs_per_installation)",
			runsWord(n))
	}
	return ""
}

func runsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// dispatched records in s that a run of g was dispatched at now, so the
// next pick of the same pass sees it going. g keeps its oldest time: the
// picker orders installations by it only after runs going and last start.
func (s *schedSnapshot) dispatched(g schedGroup, now int64) {
	s.BusyInst[g.Installation]++
	s.BusyRepo[g.Repo]++
	s.LastStarted[g.Installation] = now
}

// drop removes g, which has no run left waiting, from s.
func (s *schedSnapshot) drop(g schedGroup) {
	s.Groups = slices.DeleteFunc(s.Groups, func(x schedGroup) bool {
		return x.Installation == g.Installation && x.Repo == g.Repo
	})
}
