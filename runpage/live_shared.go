package runpage

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// sharedLoads lets the streams of one run share their looks at its
// directory: a stream that would read the run again takes the run as
// another stream read it less than a look's interval ago, so a run read
// by many viewers is read about once per interval, not once per viewer.
// A look is never older than the interval it asked for.
type sharedLoads struct {
	group singleflight.Group
	mu    sync.Mutex
	runs  map[string]loaded
}

// loaded is one read of a run's directory and when it began.
type loaded struct {
	run *Run
	at  time.Time
}

// maxShared bounds the runs remembered; past it, entries older than
// their interval go first, and then all.
const maxShared = 256

// loadShared is p.Load(id), or the run as read since fresh ago by any
// stream. A Run is not changed once loaded, so streams can share it.
func (p *Pages) loadShared(id string, fresh time.Duration) (*Run, error) {
	s := &p.shared
	s.mu.Lock()
	if l, ok := s.runs[id]; ok && time.Since(l.at) < fresh {
		s.mu.Unlock()
		return l.run, nil
	}
	s.mu.Unlock()
	v, err, _ := s.group.Do(id, func() (any, error) {
		at := time.Now()
		run, err := p.Load(id)
		if err != nil {
			return nil, err
		}
		s.remember(id, loaded{run: run, at: at}, fresh)
		return run, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Run), nil
}

func (s *sharedLoads) remember(id string, l loaded, fresh time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]loaded{}
	}
	if len(s.runs) >= maxShared {
		for k, v := range s.runs {
			if time.Since(v.at) >= fresh {
				delete(s.runs, k)
			}
		}
		if len(s.runs) >= maxShared {
			clear(s.runs)
		}
	}
	s.runs[id] = l
}
