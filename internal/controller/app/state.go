package app

import (
	"errors"
	"sync"
)

// Reasons /readyz gives before a controller exists.
var (
	errNoNB      = errors.New("Northbound not connected yet")
	errNoStarted = errors.New("controller not started")
)

// state is what /readyz reports: a standby replica (leader election, not
// leading) is ready while its Lease requests succeed, since it is healthy
// and waiting; the replica that runs the controller is ready once the
// controller is (caches synced, first full Northbound sync done).
type state struct {
	mu      sync.Mutex
	standby bool
	elector interface{ Err() error }
	nbErr   error // last failed Northbound dial, until one succeeds
	ctrl    interface{ NotReady() error }
	started bool
}

func newState(electing bool) *state { return &state{standby: electing} }

// set runs f, which sets fields of s, under s's lock.
func (s *state) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *state) setElector(e interface{ Err() error }) { s.set(func() { s.elector = e }) }

func (s *state) lead() { s.set(func() { s.standby, s.started = false, true }) }

func (s *state) nbFailed(err error) { s.set(func() { s.nbErr = err }) }

func (s *state) nbConnected() { s.nbFailed(nil) }

func (s *state) setController(c interface{ NotReady() error }) { s.set(func() { s.ctrl = c }) }

// ready is the /readyz verdict: nil, or why not.
func (s *state) ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.standby && s.elector != nil:
		return s.elector.Err()
	case s.standby:
		return nil
	case s.ctrl != nil && s.nbErr != nil:
		if err := s.ctrl.NotReady(); err != nil {
			return errors.Join(err, errNoNB, s.nbErr)
		}
		return nil
	case s.ctrl != nil:
		return s.ctrl.NotReady()
	case s.nbErr != nil:
		return errors.Join(errNoNB, s.nbErr)
	case s.started:
		return errNoNB
	}
	return errNoStarted
}
