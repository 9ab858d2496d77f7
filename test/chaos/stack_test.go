package chaos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/stack"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// Fixed parts of the wiring.
const (
	// namespace holds the Runtimes, their GardenerClusters and kubeconfig Secrets, and the
	// leader election Lease.
	namespace = "kcp-system"
	// project is the Gardener project; shoots and structured-auth ConfigMaps live in garden-kyma.
	project = "kyma"
	// leaseName is the manager's LeaderElectionID (internal/manager).
	leaseName = "infrastructure-manager.kyma-project.io"
	// stuckPrefix starts the names of the shoots whose creation hangs.
	stuckPrefix = "stuck-"
)

// gardenNamespace is the project namespace of the simulator.
var gardenNamespace = gardensim.ProjectNamespace(project)

// suite is everything a run starts: the control plane in this process, the simulator and the
// manager replicas as processes. stop ends it all, in reverse order, whatever state it is in.
type suite struct {
	dir    string
	assets string
	// parts stops the simulator and the control plane, in reverse start order.
	parts stack.Stack

	managerBin, gardensimBin string

	plane        *controlplane.ControlPlane
	cpConfig     *rest.Config
	cpKubeconfig string
	// cp reaches the control plane as an administrator.
	cp client.WithWatch
	// apiServerKilled counts the restarts in which kube-apiserver had to be SIGKILLed.
	apiServerKilled int

	sim      *stack.SimulatorProcess
	simAdmin string
	// gardenKubeconfig is the manager's (through the simulator's proxy, with its faults);
	// garden reads the garden API server directly, unseen by faults and the request log.
	gardenKubeconfig string
	garden           client.WithWatch

	// leaderElection is how the replicas find the namespace of their Lease outside a cluster.
	leaderElection leaderElectionMode
	replicas       []*replica
	supervise      sync.WaitGroup
	stopping       chan struct{}
	stopOnce       sync.Once

	// exits records the replicas' ends that the suite did not cause.
	mu    sync.Mutex
	exits []exitRecord
}

// exitRecord is a manager process that ended on its own (lost leadership, crash).
type exitRecord struct {
	at      time.Time
	replica string
	err     string
}

// leaderElectionMode says how a replica learns its lease namespace.
type leaderElectionMode int

const (
	// leaderElectionFlag: the manager has --leader-election-namespace.
	leaderElectionFlag leaderElectionMode = iota
	// leaderElectionMountNamespace: the manager has no such flag, and controller-runtime reads the
	// namespace only from the service account's namespace file, which exists only in a Pod.
	// The replica runs in a private mount namespace (unshare) with a tmpfs on /run that holds
	// /run/secrets/kubernetes.io/serviceaccount/namespace.
	leaderElectionMountNamespace
)

func (m leaderElectionMode) String() string {
	if m == leaderElectionFlag {
		return "--leader-election-namespace"
	}
	return "private mount namespace with the service account namespace file (the manager has no --leader-election-namespace)"
}

// buildBinaries builds cmd/manager and cmd/gardensim into the work directory, unless
// CHAOS_MANAGER_BIN and CHAOS_GARDENSIM_BIN name binaries already built.
func (s *suite) buildBinaries(ctx context.Context) error {
	s.managerBin, s.gardensimBin = os.Getenv("CHAOS_MANAGER_BIN"), os.Getenv("CHAOS_GARDENSIM_BIN")
	if s.managerBin != "" && s.gardensimBin != "" {
		return nil
	}
	bins, err := stack.Build(ctx, testenv.RepoRoot(), filepath.Join(s.dir, "bin"), "./cmd/manager", "./cmd/gardensim")
	if err != nil {
		return err
	}
	s.managerBin, s.gardensimBin = bins[0], bins[1]
	return nil
}

// startControlPlane boots etcd and kube-apiserver with the CRDs, the admission policies and the
// namespace. The API server's certificate directory is fixed, not a temporary one: envtest
// forgets a temporary directory on Stop and Start then makes new serving and client CAs, which
// the kubeconfig the replicas hold would no longer trust; with a fixed directory, Start reuses
// the certificates, the port and the users.
func (s *suite) startControlPlane(ctx context.Context) error {
	out, err := s.parts.CreateFile(filepath.Join(s.dir, "control-plane.log"))
	if err != nil {
		return err
	}
	certDir := filepath.Join(s.dir, "kube-apiserver")
	if err := os.MkdirAll(certDir, 0o750); err != nil {
		return fmt.Errorf("kube-apiserver directory: %w", err)
	}
	s.plane, err = s.parts.StartControlPlane(ctx, stack.ControlPlaneOptions{
		Root:          testenv.RepoRoot(),
		Assets:        s.assets,
		Namespace:     namespace,
		ProcessOutput: out,
		CertDir:       certDir,
		StartTimeout:  2 * time.Minute,
		// A kube-apiserver with open watches can take minutes to end on SIGTERM; past this it
		// is SIGKILLed, as a kubelet would after the Pod's grace period.
		StopTimeout: 15 * time.Second,
	})
	if err != nil {
		return err
	}
	s.cpConfig, s.cp = s.plane.Config, s.plane.Client
	s.cpKubeconfig = filepath.Join(s.dir, "control-plane.kubeconfig")
	return localenv.WriteKubeconfig(s.cpKubeconfig, "chaos", namespace, s.cpConfig)
}

// restartAPIServer stops the control plane's kube-apiserver, keeps it down for down, starts it
// again and returns once the kubeconfig the replicas hold reaches it again; it returns how long
// the API was unreachable.
func (s *suite) restartAPIServer(ctx context.Context, down time.Duration) (time.Duration, error) {
	api := s.plane.APIServer()
	began := time.Now()
	if err := api.Stop(); err != nil {
		// envtest SIGKILLs a kube-apiserver that has not ended within the stop timeout (one that
		// waits for its watches) and returns without waiting: the port must be free again.
		err = poll(ctx, 30*time.Second, 100*time.Millisecond, func(context.Context) (bool, error) {
			conn, dialErr := net.DialTimeout("tcp", api.Address+":"+api.Port, time.Second)
			if dialErr != nil {
				return true, nil //nolint:nilerr // a refused connection is what the poll waits for.
			}
			_ = conn.Close()
			return false, nil
		})
		if err != nil {
			return time.Since(began), fmt.Errorf("stop kube-apiserver: it still listens after SIGTERM and SIGKILL: %w", err)
		}
		s.apiServerKilled++
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(down):
	}
	if err := api.Start(); err != nil {
		return time.Since(began), fmt.Errorf("start kube-apiserver again: %w", err)
	}
	// The replicas' kubeconfig, not the in-memory configuration: it is what they reconnect with.
	cfg, err := clientcmd.BuildConfigFromFlags("", s.cpKubeconfig)
	if err != nil {
		return time.Since(began), fmt.Errorf("read %s: %w", s.cpKubeconfig, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s.cp.Scheme()})
	if err != nil {
		return time.Since(began), fmt.Errorf("client from %s: %w", s.cpKubeconfig, err)
	}
	err = poll(ctx, time.Minute, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Name: namespace}, &corev1.Namespace{}) == nil, nil
	})
	if err != nil {
		return time.Since(began), fmt.Errorf("kube-apiserver restarted on %s but its kubeconfig does not reach it: %w", s.cpConfig.Host, err)
	}
	return time.Since(began), nil
}

// chaosScenario is the simulator's scenario for the run: the transient and malformed shares of
// the profile as fault rules on every Gardener call, and a hang of the creation of the stuck
// runtimes' shoots. Rules are tried in order and the first that fires wins, so each rule's
// probability is its share divided by what the rules before it leave.
func chaosScenario(p profile) scenario.Scenario {
	every := []string{"get", "list", "create", "update", "patch", "delete", "deletecollection", fault.VerbAdminKubeconfig}
	type share struct {
		name  string
		share float64
		verbs []string
		fault fault.Fault
	}
	shares := []share{
		{"transient-5xx", 0.6 * p.Transient, nil, fault.Fault{Type: fault.TypeStatus, Codes: []int{500, 503}}},
		{"transient-drop", 0.2 * p.Transient, nil, fault.Fault{Type: fault.TypeDrop}},
		// A lost reply after the call took effect; not on watches, which it would hold open
		// until they time out.
		{"transient-lost-reply", 0.2 * p.Transient, every, fault.Fault{Type: fault.TypeDropReply}},
		{"malformed", p.Malformed, nil, fault.Fault{Type: fault.TypeMalformed}},
	}
	sc := scenario.Scenario{Name: "chaos", Description: "transient and malformed Gardener replies on every call; stuck shoots hang"}
	left := 1.0
	for _, s := range shares {
		if s.share <= 0 {
			continue
		}
		sc.Faults = append(sc.Faults, fault.Rule{
			Name: s.name, Match: fault.Match{Verbs: s.verbs}, Probability: ptr.To(min(1, s.share/left)), Fault: s.fault,
		})
		left -= s.share
	}
	sc.Lifecycle = []lifecycle.Rule{{
		Name: "stuck", Shoot: stuckPrefix + "*", Outcome: lifecycle.OutcomeHang,
		Operations: []gardencorev1beta1.LastOperationType{gardencorev1beta1.LastOperationTypeCreate},
	}}
	return sc
}

// startSimulator runs cmd/gardensim with the chaos scenario, shared shoot clusters, and the
// kubeconfigs it writes for the manager and for the suite. It is SIGTERMed if the test process
// dies, so that it stops its own etcd and API servers.
func (s *suite) startSimulator(ctx context.Context, p profile) error {
	sc, err := yaml.Marshal(chaosScenario(p))
	if err != nil {
		return fmt.Errorf("encode scenario: %w", err)
	}
	scenarioFile := filepath.Join(s.dir, "scenario.yaml")
	if err := os.WriteFile(scenarioFile, sc, 0o644); err != nil {
		return fmt.Errorf("write scenario: %w", err)
	}
	s.sim, err = s.parts.StartSimulatorProcess(ctx, stack.SimulatorProcessOptions{
		Binary: s.gardensimBin, Dir: s.dir, Assets: s.assets,
		Args: []string{
			"--scenario-file", scenarioFile,
			"--shoot-mode", "shared",
			"--operation-duration", p.OperationDuration.String(),
			"--error-retry-delay", "2s",
			"--projects", project,
			"--seed", fmt.Sprint(p.Seed),
		},
	})
	if err != nil {
		return err
	}
	s.simAdmin, s.gardenKubeconfig = s.sim.AdminURL, s.sim.Kubeconfig
	if s.garden, err = client.NewWithWatch(s.sim.GardenAdmin, client.Options{Scheme: s.cp.Scheme()}); err != nil {
		return fmt.Errorf("garden client: %w", err)
	}
	return nil
}

// detectLeaderElection finds out how the replicas can elect a leader outside a cluster.
func (s *suite) detectLeaderElection() error {
	help, _ := exec.Command(s.managerBin, "-help").CombinedOutput() //nolint:gosec // the binary the suite built.
	if bytes.Contains(help, []byte("-leader-election-namespace")) {
		s.leaderElection = leaderElectionFlag
		return nil
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return errors.New("the manager has no --leader-election-namespace and unshare(1) is missing: " +
			"leader election outside a cluster cannot find its namespace")
	}
	probe := exec.Command("unshare", "--mount", "--propagation", "private", "true")
	if out, err := probe.CombinedOutput(); err != nil {
		return fmt.Errorf("the manager has no --leader-election-namespace and unshare --mount fails (it needs root): %w: %s", err, out)
	}
	s.leaderElection = leaderElectionMountNamespace
	return nil
}

// replica is one manager process slot: the suite restarts whatever ends in it.
type replica struct {
	name             string
	metrics, probe   string
	mu               sync.Mutex
	proc             *subprocess.Process
	starts           int
	killedDeliberate bool
}

// current returns the replica's process.
func (r *replica) current() *subprocess.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc
}

// managerArgs are the flags of every replica: short retries and deadlines from the profile.
func (s *suite) managerArgs(p profile, r *replica) []string {
	args := []string{
		"--gardener-kubeconfig", s.gardenKubeconfig,
		"--gardener-project", project,
		"--leader-elect",
		"--metrics-bind-address", r.metrics,
		"--metrics-secure=false",
		"--health-probe-bind-address", r.probe,
		"--namespace", namespace,
		"--workers", "10",
		"--retry-initial", "1s",
		"--retry-factor", "2",
		"--retry-cap", "10s",
		"--retry-attempts", fmt.Sprint(p.RetryAttempts),
		"--retry-jitter", "0.5",
		"--failed-probe-interval", p.FailedProbe.String(),
		"--shoot-create-deadline", p.ShootCreateDeadline.String(),
		"--shoot-delete-deadline", p.ShootDeleteDeadline.String(),
		"--kubeconfig-deadline", p.KubeconfigDeadline.String(),
		"--poll-interval", p.Poll.String(),
		"--gardener-request-timeout", "30s",
	}
	if s.leaderElection == leaderElectionFlag {
		args = append(args, "--leader-election-namespace", namespace)
	}
	return args
}

// startReplica starts the replica's manager process; a SIGKILL reaches it when the test dies.
func (s *suite) startReplica(p profile, r *replica) error {
	bin, args := s.managerBin, s.managerArgs(p, r)
	if s.leaderElection == leaderElectionMountNamespace {
		// unshare execs sh, which execs the manager: one process, the one the suite kills.
		script := `mount -t tmpfs -o size=1m chaos-run /run && mkdir -p /run/secrets/kubernetes.io/serviceaccount && ` +
			`printf %s "$0" > /run/secrets/kubernetes.io/serviceaccount/namespace && exec "$@"`
		args = append([]string{"--mount", "--propagation", "private", "sh", "-c", script, namespace, bin}, args...)
		bin = "unshare"
	}
	env := []string{"KUBECONFIG=" + s.cpKubeconfig, "POD_NAMESPACE=" + namespace}
	proc, err := subprocess.Start(r.name, subprocess.Options{Log: filepath.Join(s.dir, r.name+".log"), Env: env}, bin, args...)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.proc, r.killedDeliberate = proc, false
	r.starts++
	r.mu.Unlock()
	return nil
}

// startManagers starts the replicas, and a supervisor for each that restarts its process
// whenever it ends: at once after a kill of the suite, after a growing pause (1s to 10s, as a
// kubelet's back-off) after an end of its own. It returns once one replica leads.
func (s *suite) startManagers(ctx context.Context, p profile) error {
	for i := range p.Replicas {
		r := &replica{name: fmt.Sprintf("manager-%d", i)}
		var err error
		if r.metrics, err = subprocess.LoopbackAddress(0); err != nil {
			return err
		}
		if r.probe, err = subprocess.LoopbackAddress(0); err != nil {
			return err
		}
		if err := s.startReplica(p, r); err != nil {
			return err
		}
		s.replicas = append(s.replicas, r)
		s.supervise.Add(1)
		go s.superviseReplica(p, r)
	}
	_, err := s.findLeader(ctx, 2*time.Minute)
	return err
}

// superviseReplica restarts the replica's process each time it ends, until the stack stops.
func (s *suite) superviseReplica(p profile, r *replica) {
	defer s.supervise.Done()
	backoff := time.Second
	for {
		proc := r.current()
		select {
		case <-s.stopping:
			return
		case <-proc.Done():
		}
		r.mu.Lock()
		deliberate := r.killedDeliberate
		r.mu.Unlock()
		if !deliberate {
			s.mu.Lock()
			s.exits = append(s.exits, exitRecord{at: time.Now(), replica: r.name, err: lastWords(proc)})
			s.mu.Unlock()
			if time.Since(proc.Started()) > 30*time.Second {
				backoff = time.Second
			}
			select {
			case <-s.stopping:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 10*time.Second)
		}
		for s.startReplica(p, r) != nil {
			select {
			case <-s.stopping:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// lastWords is why a manager process ended: the error cmd/manager prints last ("manager: ..."),
// else its exit status.
func lastWords(p *subprocess.Process) string {
	lines := strings.Split(p.LogTail(30), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "manager: ") {
			return strings.TrimPrefix(lines[i], "manager: ")
		}
	}
	return fmt.Sprint(p.Err())
}

// killReplica SIGKILLs the replica's process; its supervisor starts it again at once.
func (s *suite) killReplica(r *replica) error {
	r.mu.Lock()
	proc := r.proc
	r.killedDeliberate = true
	r.mu.Unlock()
	return proc.Kill()
}

// unexpectedExits returns the replicas' own ends so far.
func (s *suite) unexpectedExits() []exitRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]exitRecord(nil), s.exits...)
}

// findLeader polls the replicas' metrics until one reports leader_election_master_status 1.
func (s *suite) findLeader(ctx context.Context, timeout time.Duration) (*replica, error) {
	var leader *replica
	err := poll(ctx, timeout, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		var errs []error
		for _, r := range s.replicas {
			if r.current().Exited() {
				continue
			}
			samples, err := scrape(ctx, r.metrics)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.name, err))
				continue
			}
			for _, sm := range samples["leader_election_master_status"] {
				if sm.labels["name"] == leaseName && sm.value == 1 {
					leader = r
					return true, nil
				}
			}
		}
		return false, errors.Join(errs...)
	})
	if err != nil {
		var tails []string
		for _, r := range s.replicas {
			tails = append(tails, r.name+":\n"+r.current().LogTail(15))
		}
		return nil, fmt.Errorf("no replica leads: %w\n%s", err, strings.Join(tails, "\n"))
	}
	return leader, nil
}

// stop ends everything in reverse start order and reports what would not stop cleanly.
func (s *suite) stop() error {
	var errs []error
	s.stopOnce.Do(func() { close(s.stopping) })
	s.supervise.Wait()
	for _, r := range s.replicas {
		if proc := r.current(); proc != nil {
			_ = proc.Stop(15 * time.Second) // a manager killed at shutdown is no finding
		}
	}
	if err := s.parts.Stop(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
