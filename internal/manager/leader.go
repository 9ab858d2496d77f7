package manager

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

const (
	// LeaderElectionID names this manager's lease.
	LeaderElectionID = "infrastructure-manager.kyma-project.io"
	// UpstreamLeaderElectionID names the lease upstream's manager elects its leader with, in
	// the namespace it runs in.
	UpstreamLeaderElectionID = "f1c68560.kyma-project.io"
)

// JointLease is a leader election lock over two leases held together: this manager's own and
// upstream's. A replica leads only while it holds both. So it never acts while a replica of
// upstream's manager holds upstream's lease, and a replica of upstream's manager started beside
// it finds its lease held and waits.
//
// The elector sees one record. Its holder is whoever holds upstream's lease, when that is not
// the holder of the own lease; otherwise the own lease's holder. Its raw form joins both leases,
// so a renewal of either counts as a sign of life of the holder.
type JointLease struct {
	own, upstream *resourcelock.LeaseLock
	// exists records, per lease, whether the last read or write found it, so that a write
	// creates a lease that is missing and updates one that is not.
	ownExists, upstreamExists bool
}

var _ resourcelock.Interface = (*JointLease)(nil)

// NewJointLease returns the lock of a replica named identity over the leases ownID and
// upstreamID in namespace.
func NewJointLease(leases coordinationv1client.LeasesGetter, namespace, ownID, upstreamID, identity string) *JointLease {
	lock := func(name string) *resourcelock.LeaseLock {
		return &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		}
	}
	return &JointLease{own: lock(ownID), upstream: lock(upstreamID)}
}

// newLeaderLock returns the lock of this replica: the joint lease when it elects a leader and
// upstreamID is set, else nil, and controller-runtime makes its own lease lock if it elects one.
// The identity is the host name and a random suffix, and each lease request times out after
// half the renew deadline (10s), as controller-runtime has them.
func newLeaderLock(cfg *rest.Config, elect bool, namespace, upstreamID string) (resourcelock.Interface, error) {
	if !elect || upstreamID == "" {
		return nil, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader election identity: %w", err)
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = 5 * time.Second
	leases, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("leader election client: %w", err)
	}
	return NewJointLease(leases, namespace, LeaderElectionID, upstreamID, host+"_"+string(uuid.NewUUID())), nil
}

// Get reads both leases and returns their joint record. It answers NotFound only when neither
// lease exists, for the elector to create them.
func (j *JointLease) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	own, ownRaw, ownErr := j.own.Get(ctx)
	if ownErr != nil && !apierrors.IsNotFound(ownErr) {
		return nil, nil, fmt.Errorf("read lease %s: %w", j.own.Describe(), ownErr)
	}
	up, upRaw, upErr := j.upstream.Get(ctx)
	if upErr != nil && !apierrors.IsNotFound(upErr) {
		return nil, nil, fmt.Errorf("read lease %s: %w", j.upstream.Describe(), upErr)
	}
	j.ownExists, j.upstreamExists = ownErr == nil, upErr == nil
	if !j.ownExists && !j.upstreamExists {
		// The elector creates both leases on NotFound, which wrapping keeps.
		return nil, nil, fmt.Errorf("neither lease exists: %w", ownErr)
	}
	return jointRecord(own, up), bytes.Join([][]byte{ownRaw, upRaw}, []byte(",")), nil
}

// jointRecord is the record the elector sees of the own lease own and upstream's lease up,
// either of which may be missing.
func jointRecord(own, up *resourcelock.LeaderElectionRecord) *resourcelock.LeaderElectionRecord {
	switch {
	case own == nil:
		rec := *up
		return &rec
	case up == nil:
		rec := *own
		return &rec
	}
	rec := *own
	if up.HolderIdentity != "" && up.HolderIdentity != own.HolderIdentity {
		rec.HolderIdentity = up.HolderIdentity
	}
	rec.LeaseDurationSeconds = max(own.LeaseDurationSeconds, up.LeaseDurationSeconds)
	return &rec
}

// Create creates both leases, holding rec.
func (j *JointLease) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return j.write(ctx, rec)
}

// Update writes rec to both leases, upstream's first: it is the one a replica of upstream's
// manager contends for. A lease that is missing is created. Each write is conditional on the
// lease as last read, so a replica that lost a race takes neither.
func (j *JointLease) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return j.write(ctx, rec)
}

func (j *JointLease) write(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	for _, l := range []struct {
		lock   *resourcelock.LeaseLock
		exists *bool
	}{{j.upstream, &j.upstreamExists}, {j.own, &j.ownExists}} {
		write := l.lock.Create
		if *l.exists {
			write = l.lock.Update
		}
		if err := write(ctx, rec); err != nil {
			return fmt.Errorf("write lease %s: %w", l.lock.Describe(), err)
		}
		*l.exists = true
	}
	return nil
}

// RecordEvent records an event on both leases.
func (j *JointLease) RecordEvent(s string) {
	j.own.RecordEvent(s)
	j.upstream.RecordEvent(s)
}

// Describe names both leases.
func (j *JointLease) Describe() string {
	return j.own.Describe() + " and " + j.upstream.Describe()
}

// Identity is this replica's name in both leases.
func (j *JointLease) Identity() string {
	return j.own.Identity()
}
