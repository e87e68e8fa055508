package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderConfig configures leader election on a coordination.k8s.io Lease.
type LeaderConfig struct {
	Kube            *rest.Config
	Namespace, Name string // the Lease
	Identity        string // this replica's holder identity; unique per process
	LeaseDuration   time.Duration
	RenewDeadline   time.Duration
	RetryPeriod     time.Duration
	Log             *slog.Logger
}

// ErrLeadershipLost is returned by Elector.Run when the lease could not be
// renewed: the process must exit so that it restarts as a candidate.
var ErrLeadershipLost = errors.New("leader election lost")

// Elector runs a function only while it holds the Lease.
type Elector struct {
	cfg     LeaderConfig
	log     *slog.Logger
	lec     leaderelection.LeaderElectionConfig
	lock    *observedLock
	leading atomic.Bool

	mu       sync.Mutex
	stopping bool
	running  bool
	finished chan struct{} // closed when run returned
	runErr   error
}

// NewElector validates cfg and builds an elector; Run starts it.
func NewElector(cfg LeaderConfig) (*Elector, error) {
	if cfg.Kube == nil || cfg.Namespace == "" || cfg.Name == "" || cfg.Identity == "" {
		return nil, errors.New("leader election: Kube, Namespace, Name and Identity are required")
	}
	kube, err := kubernetes.NewForConfig(cfg.Kube)
	if err != nil {
		return nil, fmt.Errorf("leader election: kubernetes client: %w", err)
	}
	e := &Elector{cfg: cfg, log: orDiscard(cfg.Log), finished: make(chan struct{})}
	lock := &observedLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(cfg.Namespace, cfg.Name),
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: cfg.Identity},
	}}
	e.lock = lock
	e.lec = leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   cfg.LeaseDuration,
		RenewDeadline:   cfg.RenewDeadline,
		RetryPeriod:     cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            cfg.Namespace + "/" + cfg.Name,
		Callbacks: leaderelection.LeaderCallbacks{ // validation only; Run sets the real ones
			OnStartedLeading: func(context.Context) {},
			OnStoppedLeading: func() {},
		},
	}
	if _, err := leaderelection.NewLeaderElector(e.lec); err != nil {
		return nil, fmt.Errorf("leader election on lease %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	return e, nil
}

// Leading reports whether this replica holds the lease now.
func (e *Elector) Leading() bool { return e.leading.Load() }

// Err is the error of the last Lease request when it failed (losing a
// race for the Lease is no error), nil otherwise: a standby that cannot read or
// create the Lease (RBAC, API server down) is not healthy.
func (e *Elector) Err() error {
	if p := e.lock.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// observedLock records the outcome of every Lease request.
type observedLock struct {
	resourcelock.Interface
	lastErr atomic.Pointer[error]
}

func (l *observedLock) record(err error) error {
	// Not found, already exists and conflicts are the normal outcomes of
	// replicas racing for the Lease, not failures.
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		l.lastErr.Store(nil)
		return err
	}
	wrapped := fmt.Errorf("lease %s: %w", l.Describe(), err)
	l.lastErr.Store(&wrapped)
	return err
}

func (l *observedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	return rec, raw, l.record(err)
}

func (l *observedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.record(l.Interface.Create(ctx, ler))
}

func (l *observedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.record(l.Interface.Update(ctx, ler))
}

// Run campaigns for the lease until ctx ends and runs run while leading.
// When ctx ends, run is stopped first (its in-flight work finishes) and
// the lease is released afterwards, so the next leader never overlaps a
// transaction of this one; Run then returns run's error (nil when it
// stopped cleanly). When the lease is lost while ctx lives, run is
// stopped and Run returns ErrLeadershipLost; when run returns an error
// of its own while leading, the lease is released and Run returns it.
func (e *Elector) Run(ctx context.Context, run func(ctx context.Context) error) error {
	// The elector's own context ends only after run returned: cancelling
	// it releases the lease.
	leCtx, leCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer leCancel()
	lec := e.lec
	lec.Callbacks = e.callbacks(ctx, run)
	le, err := leaderelection.NewLeaderElector(lec)
	if err != nil {
		return fmt.Errorf("leader election on lease %s: %w", lec.Name, err)
	}
	leDone := make(chan struct{})
	go func() {
		defer close(leDone)
		le.Run(leCtx)
	}()
	select {
	case <-ctx.Done():
	case <-leDone:
	case <-e.finished: // run stopped while leading (an error of its own): release the lease
	}
	e.mu.Lock()
	e.stopping = true
	wasRunning := e.running
	e.mu.Unlock()
	if wasRunning {
		<-e.finished
	}
	leCancel()
	<-leDone
	if ctx.Err() == nil {
		if e.runErr != nil && !errors.Is(e.runErr, ErrLeadershipLost) {
			e.log.Error("stopped leading after an error; lease released", "lease", e.cfg.Namespace+"/"+e.cfg.Name, "err", e.runErr)
			return fmt.Errorf("lease %s/%s, identity %s: released: %w", e.cfg.Namespace, e.cfg.Name, e.cfg.Identity, e.runErr)
		}
		return fmt.Errorf("lease %s/%s, identity %s: %w", e.cfg.Namespace, e.cfg.Name, e.cfg.Identity, ErrLeadershipLost)
	}
	e.log.Info("stopped; lease released", "lease", e.cfg.Namespace+"/"+e.cfg.Name, "identity", e.cfg.Identity)
	return e.runErr
}

// callbacks runs run (under a context ending with ctx or the lease)
// from the moment the lease is acquired, unless Run is already stopping.
func (e *Elector) callbacks(ctx context.Context, run func(context.Context) error) leaderelection.LeaderCallbacks {
	lease := e.cfg.Namespace + "/" + e.cfg.Name
	var cb leaderelection.LeaderCallbacks
	cb.OnStartedLeading = func(leading context.Context) {
		e.mu.Lock()
		if e.stopping {
			e.mu.Unlock()
			return
		}
		e.running = true
		e.mu.Unlock()
		defer close(e.finished)
		e.leading.Store(true)
		e.log.Info("became leader", "lease", lease, "identity", e.cfg.Identity)
		runCtx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		// Losing the lease stops run's writes at once (cause
		// ErrLeadershipLost: no drain), unlike ctx ending (SIGTERM).
		stop := context.AfterFunc(leading, func() { cancel(ErrLeadershipLost) })
		defer stop()
		e.runErr = run(runCtx)
	}
	cb.OnStoppedLeading = func() {
		if e.leading.Swap(false) {
			e.log.Info("stopped leading", "lease", lease, "identity", e.cfg.Identity)
		}
	}
	return cb
}

func metaFor(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
