package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

func TestIssue(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.CertPEM()) {
		t.Fatal("CA certificate does not parse")
	}
	tests := []struct {
		name  string                       // case name
		issue func() (KeyPair, error)      // what to mint
		usage x509.ExtKeyUsage             // the usage the certificate must verify for
		check func(*x509.Certificate) bool // extra property of the certificate
	}{
		{
			name:  "serving certificate covers IPs and names",
			issue: func() (KeyPair, error) { return ca.IssueServing([]string{"localhost", "127.0.0.1"}, time.Hour) },
			usage: x509.ExtKeyUsageServerAuth,
			check: func(c *x509.Certificate) bool {
				return c.VerifyHostname("127.0.0.1") == nil && c.VerifyHostname("localhost") == nil
			},
		},
		{
			name:  "client certificate carries user and groups",
			issue: func() (KeyPair, error) { return ca.IssueClient("alice", []string{"system:masters"}, 10*time.Minute) },
			usage: x509.ExtKeyUsageClientAuth,
			check: func(c *x509.Certificate) bool {
				return c.Subject.CommonName == "alice" && len(c.Subject.Organization) == 1 &&
					time.Until(c.NotAfter) <= 10*time.Minute && time.Until(c.NotAfter) > 9*time.Minute
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := tc.issue()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
				t.Fatalf("key pair does not load: %v", err)
			}
			block, _ := pem.Decode(kp.CertPEM)
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
				t.Fatalf("certificate does not verify: %v", err)
			}
			if !cert.NotAfter.Equal(kp.NotAfter) {
				t.Errorf("NotAfter = %v, certificate says %v", kp.NotAfter, cert.NotAfter)
			}
			if !tc.check(cert) {
				t.Errorf("certificate property check failed: %+v", cert.Subject)
			}
		})
	}
}
