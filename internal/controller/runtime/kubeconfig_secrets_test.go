package runtime

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
)

// testCert is a certificate and its key, signed by parent (self-signed when nil).
type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCert(t testing.TB, cn string, ca bool, parent *testCert) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: ca, BasicConstraintsValid: true, DNSNames: []string{"runtime.test"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert: cert, key: key}
}

func (c *testCert) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
}

func (c *testCert) keyPEM(t testing.TB, pkcs8 bool) []byte {
	t.Helper()
	if pkcs8 {
		der, err := x509.MarshalPKCS8PrivateKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	der, err := x509.MarshalECPrivateKey(c.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// blocksOf decodes every PEM block of data.
func blocksOf(data []byte) []*pem.Block {
	var blocks []*pem.Block
	for b, rest := pem.Decode(data); b != nil; b, rest = pem.Decode(rest) {
		blocks = append(blocks, b)
	}
	return blocks
}

func TestPEMDataKeepsWhatItsReadersSee(t *testing.T) {
	ca := newTestCert(t, "ca", true, nil)
	leaf := newTestCert(t, "leaf", false, ca)
	// A bundle as people write them: a comment before each certificate.
	bundle := bytes.Join([][]byte{[]byte("# leaf\n"), leaf.certPEM(), []byte("# issuer\n"), ca.certPEM()}, nil)
	withHeaders := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: ca.cert.Raw})

	for _, tc := range []struct {
		name    string
		data    []byte
		compact bool // whether it is kept as DER, else as it is
	}{
		{"a CA", ca.certPEM(), true},
		{"a bundle with comments", bundle, true},
		{"an EC key", leaf.keyPEM(t, false), true},
		{"a PKCS #8 key", leaf.keyPEM(t, true), true},
		{"a block with headers", append(ca.certPEM(), withHeaders...), false},
		{"no PEM at all", []byte("not a certificate"), false},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pemDataOf(tc.data)
			got := p.pem()
			if !tc.compact {
				if !bytes.Equal(got, tc.data) || p.blocks != nil {
					t.Fatalf("kept %q as %d blocks, want the data as it is", got, len(p.blocks))
				}
				return
			}
			want := blocksOf(tc.data)
			back := blocksOf(got)
			if len(back) != len(want) {
				t.Fatalf("%d blocks back, want %d", len(back), len(want))
			}
			for i := range want {
				if back[i].Type != want[i].Type || !bytes.Equal(back[i].Bytes, want[i].Bytes) || len(back[i].Headers) > 0 {
					t.Errorf("block %d is %s of %d bytes, want %s of %d", i, back[i].Type, len(back[i].Bytes), want[i].Type, len(want[i].Bytes))
				}
			}
			if kept := len(p.der); kept*4 > len(tc.data)*3 {
				t.Errorf("keeps %d bytes of %d bytes of PEM, want at most three quarters", kept, len(tc.data))
			}
		})
	}

	// What the TLS client reads from them: the pool and the key pair.
	pair, err := tls.X509KeyPair(pemDataOf(bundle).pem(), pemDataOf(leaf.keyPEM(t, false)).pem())
	if err != nil {
		t.Fatalf("the key pair of the kept certificate and key: %v", err)
	}
	if len(pair.Certificate) != 2 || !bytes.Equal(pair.Certificate[0], leaf.cert.Raw) {
		t.Errorf("the key pair holds %d certificates, want the leaf and its issuer", len(pair.Certificate))
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pemDataOf(ca.certPEM()).pem()) {
		t.Error("the kept CA adds no certificate to a pool")
	}
}

// TestKubeconfigSecretConnects builds the watch's form of a kubeconfig Secret with a client
// certificate and reaches a server that asks for it, through the rest.Config it gives back.
func TestKubeconfigSecretConnects(t *testing.T) {
	ca := newTestCert(t, "ca", true, nil)
	serverCert := newTestCert(t, "server", false, ca)
	user := newTestCert(t, "admin", false, ca)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)

	var seen string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		seen = r.TLS.PeerCertificates[0].Subject.CommonName
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serverCert.cert.Raw}, PrivateKey: serverCert.key}},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: pool,
	}
	srv.StartTLS()
	defer srv.Close()

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca.certPEM(), TLSServerName: "runtime.test"}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: user.certPEM(), ClientKeyData: user.keyPEM(t, false)}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "c"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "kubeconfig-rt", UID: "u1", ResourceVersion: "7"},
		Data:       map[string][]byte{KubeconfigKey: data},
	}
	obj, err := KubeconfigSecretTransform(secret)
	if err != nil {
		t.Fatal(err)
	}
	k := obj.(*KubeconfigSecret)
	if k.Refused != nil || k.Empty {
		t.Fatalf("the kubeconfig is refused (%v) or empty (%t)", k.Refused, k.Empty)
	}
	if k.conn.caData.blocks == nil || k.conn.certData.blocks == nil || k.conn.keyData.blocks == nil {
		t.Error("the CA, certificate or key is kept as PEM, want DER")
	}

	hc, err := rest.HTTPClientFor(k.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(srv.URL + "/version")
	if err != nil {
		t.Fatalf("GET through the kept connection: %v", err)
	}
	_ = resp.Body.Close()
	if seen != "admin" {
		t.Errorf("the server saw the client certificate of %q, want admin", seen)
	}
}

// TestKubeconfigSecretsWithoutListRights runs the watch as under a Role without list and watch
// on Secrets (an older install): the watch never lists, and every read goes to the API server,
// so runtimes keep working at the cost of the requests the watch saves.
func TestKubeconfigSecretsWithoutListRights(t *testing.T) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "kubeconfig-rt", Labels: map[string]string{
			infrav1.LabelKymaManagedBy: gardenercluster.ManagedBy, infrav1.LabelClusterName: "rt"}},
		Data: map[string][]byte{KubeconfigKey: []byte(testKubeconfig("rt"))},
	}
	listed := make(chan struct{})
	var once sync.Once
	forbidden := apierrors.NewForbidden(corev1.Resource("secrets"), "", errors.New("the Role grants get only"))
	secrets := watchKubeconfigSecrets(&toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			once.Do(func() { close(listed) })
			return nil, forbidden
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return nil, forbidden },
	}, fake.NewClientBuilder().WithObjects(secret).Build())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- secrets.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the watch ended: %v", err)
		}
	}()

	// The reflector lists at once; a list that never comes ends the test at the deadline.
	select {
	case <-listed:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not try to list within 30s")
	}
	got, err := secrets.Get(t.Context(), client.ObjectKeyFromObject(secret))
	if err != nil {
		t.Fatalf("read without the watch: %v", err)
	}
	if secrets.Synced() || !got.OwnedBy("rt") || got.RESTConfig() == nil || hostOf(got.RESTConfig()) != "rt" {
		t.Errorf("synced %t; got a Secret owned by rt %t with connection %+v, want the API server's, unsynced", secrets.Synced(), got.OwnedBy("rt"), got.RESTConfig())
	}
}
