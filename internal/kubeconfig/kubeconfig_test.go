package kubeconfig_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
)

// valid is a kubeconfig as Gardener issues it: a server over https, CA data and inline
// credentials.
func valid() *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shoot"] = &clientcmdapi.Cluster{Server: "https://api.shoot.example.com", CertificateAuthorityData: []byte("ca")}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t0ken", ClientCertificateData: []byte("cert"), ClientKeyData: []byte("key")}
	cfg.Contexts["shoot"] = &clientcmdapi.Context{Cluster: "shoot", AuthInfo: "admin"}
	// Another context may hold anything: only the current one is used.
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "http://127.0.0.1", InsecureSkipTLSVerify: true}
	cfg.AuthInfos["other"] = &clientcmdapi.AuthInfo{TokenFile: "/var/run/secrets/token"}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "other"}
	cfg.CurrentContext = "shoot"
	return cfg
}

func TestRESTConfig(t *testing.T) {
	cases := []struct {
		name   string                     // what the kubeconfig has
		change func(*clientcmdapi.Config) // turns the valid kubeconfig into it
		field  string                     // the refused field; empty when it is accepted
	}{
		{name: "inline credentials and CA data", change: func(*clientcmdapi.Config) {}},
		{name: "a TLS server name and a user name and password", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].TLSServerName = "api.internal"
			c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Username: "u", Password: "p"}
		}},
		{name: "an exec plugin", field: "users[admin].user.exec", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].Exec = &clientcmdapi.ExecConfig{Command: "sh", APIVersion: "client.authentication.k8s.io/v1"}
		}},
		{name: "an auth provider", field: "users[admin].user.auth-provider", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
		}},
		{name: "a token file", field: "users[admin].user.tokenFile", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].Token, c.AuthInfos["admin"].TokenFile = "", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		}},
		{name: "a client certificate file", field: "users[admin].user.client-certificate", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].ClientCertificate = "/etc/cert.pem"
		}},
		{name: "a client key file", field: "users[admin].user.client-key", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].ClientKey = "/etc/key.pem"
		}},
		{name: "impersonation", field: "users[admin].user.act-as", change: func(c *clientcmdapi.Config) {
			c.AuthInfos["admin"].ImpersonateGroups = []string{"system:masters"}
		}},
		{name: "a CA file", field: "clusters[shoot].cluster.certificate-authority", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].CertificateAuthority = "/etc/ca.pem"
		}},
		{name: "insecure-skip-tls-verify", field: "clusters[shoot].cluster.insecure-skip-tls-verify", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].InsecureSkipTLSVerify, c.Clusters["shoot"].CertificateAuthorityData = true, nil
		}},
		{name: "an http server", field: "clusters[shoot].cluster.server", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].Server = "http://api.shoot.example.com"
		}},
		{name: "a server without a scheme", field: "clusters[shoot].cluster.server", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].Server = "api.shoot.example.com:443"
		}},
		{name: "no server", field: "clusters[shoot].cluster.server", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].Server = ""
		}},
		{name: "a server with user info", field: "clusters[shoot].cluster.server", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].Server = "https://u:p@api.shoot.example.com"
		}},
		{name: "a proxy", field: "clusters[shoot].cluster.proxy-url", change: func(c *clientcmdapi.Config) {
			c.Clusters["shoot"].ProxyURL = "http://proxy.example.com"
		}},
		{name: "no current context", field: "current-context", change: func(c *clientcmdapi.Config) { c.CurrentContext = "" }},
		{name: "a current context that does not exist", field: "current-context", change: func(c *clientcmdapi.Config) { c.CurrentContext = "gone" }},
		{name: "a context whose cluster does not exist", field: "contexts[shoot].context.cluster", change: func(c *clientcmdapi.Config) {
			c.Contexts["shoot"].Cluster = "gone"
		}},
		{name: "a context whose user does not exist", field: "contexts[shoot].context.user", change: func(c *clientcmdapi.Config) {
			c.Contexts["shoot"].AuthInfo = "gone"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.change(cfg)
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := kubeconfig.RESTConfig("Secret kcp-system/kubeconfig-rt", data)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				assertInline(t, cfg, rc.Host, rc.CAData, rc.BearerToken, rc.Username, rc.ServerName)
				return
			}
			var refused *kubeconfig.Error
			if !errors.As(err, &refused) {
				t.Fatalf("got %v, want a *kubeconfig.Error", err)
			}
			if refused.Field != tc.field || !strings.Contains(err.Error(), "Secret kcp-system/kubeconfig-rt") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q (field %q) does not name the Secret and %s", err, refused.Field, tc.field)
			}
		})
	}
}

// assertInline checks that the rest.Config has the current context's inline data.
func assertInline(t *testing.T, cfg *clientcmdapi.Config, host string, ca []byte, token, username, serverName string) {
	t.Helper()
	cluster, user := cfg.Clusters["shoot"], cfg.AuthInfos["admin"]
	if host != cluster.Server || string(ca) != string(cluster.CertificateAuthorityData) || token != user.Token ||
		username != user.Username || serverName != cluster.TLSServerName {
		t.Errorf("rest.Config host %q, CA %q, token %q, user %q, server name %q; want the current context's", host, ca, token, username, serverName)
	}
}

// TestRESTConfigRefusesWhatDoesNotParse: garbage is refused as the writer's problem too.
func TestRESTConfigRefusesWhatDoesNotParse(t *testing.T) {
	_, err := kubeconfig.RESTConfig("file /gardener/kubeconfig", []byte("\x00not: [a kubeconfig"))
	if !kubeconfig.IsRefused(err) || !strings.Contains(err.Error(), "file /gardener/kubeconfig") {
		t.Errorf("got %v, want a refusal naming the file", err)
	}
}
