package kubeconfig

import (
	"errors"
	"fmt"
	"net/url"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Error is a kubeconfig that is refused: it does not parse, or a field of its current context
// is not allowed. It is the writer's problem, not a passing one: retrying does not help.
type Error struct {
	// Source names the kubeconfig, such as "Secret kcp-system/kubeconfig-x" or "file /path".
	Source string
	// Field is the refused field in the kubeconfig's own terms, such as
	// "users[admin].user.tokenFile"; empty when the kubeconfig does not parse.
	Field string
	// Detail says why.
	Detail string
	// Err is the parse error, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	msg := "kubeconfig"
	if e.Source != "" {
		msg += " in " + e.Source
	}
	if e.Field != "" {
		msg += ": " + e.Field
	}
	msg += ": " + e.Detail
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the parse error.
func (e *Error) Unwrap() error { return e.Err }

// IsRefused reports whether err is, or wraps, a refused kubeconfig.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// RESTConfig parses data, a kubeconfig from source, checks the cluster and user of its current
// context and returns a rest.Config built from their inline data only: the server, the TLS
// server name, the CA data, client certificate and key data, a bearer token, or a user name and
// password. Anything else that would change how the client connects or who it is is refused
// with an *Error naming source and field.
func RESTConfig(source string, data []byte) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, &Error{Source: source, Detail: "does not parse", Err: err}
	}
	cluster, clusterName, user, userName, err := current(cfg)
	if err != nil {
		return nil, refuse(source, err)
	}
	if err := checkCluster(clusterName, cluster); err != nil {
		return nil, refuse(source, err)
	}
	if err := checkUser(userName, user); err != nil {
		return nil, refuse(source, err)
	}
	return &rest.Config{
		Host:        cluster.Server,
		BearerToken: user.Token,
		Username:    user.Username,
		Password:    user.Password,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: cluster.TLSServerName,
			CAData:     cluster.CertificateAuthorityData,
			CertData:   user.ClientCertificateData,
			KeyData:    user.ClientKeyData,
		},
		DisableCompression: cluster.DisableCompression,
	}, nil
}

// fieldError is a refused field before the source is known.
type fieldError struct{ field, detail string }

func (e *fieldError) Error() string { return e.field + ": " + e.detail }

// refuse turns a fieldError into an *Error of source.
func refuse(source string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &Error{Source: source, Field: fe.field, Detail: fe.detail}
	}
	return &Error{Source: source, Detail: err.Error()}
}

// current returns the cluster and user of the current context, with their names.
func current(cfg *clientcmdapi.Config) (*clientcmdapi.Cluster, string, *clientcmdapi.AuthInfo, string, error) {
	if cfg.CurrentContext == "" {
		return nil, "", nil, "", &fieldError{"current-context", "is not set"}
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || ctx == nil {
		return nil, "", nil, "", &fieldError{"current-context", fmt.Sprintf("names the context %q, which does not exist", cfg.CurrentContext)}
	}
	contextField := fmt.Sprintf("contexts[%s].context", cfg.CurrentContext)
	cluster, ok := cfg.Clusters[ctx.Cluster]
	if !ok || cluster == nil {
		return nil, "", nil, "", &fieldError{contextField + ".cluster", fmt.Sprintf("names the cluster %q, which does not exist", ctx.Cluster)}
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok || user == nil {
		return nil, "", nil, "", &fieldError{contextField + ".user", fmt.Sprintf("names the user %q, which does not exist", ctx.AuthInfo)}
	}
	return cluster, ctx.Cluster, user, ctx.AuthInfo, nil
}

// checkCluster refuses a cluster that is not reached over verified TLS, directly.
func checkCluster(name string, c *clientcmdapi.Cluster) error {
	field := func(f string) string { return fmt.Sprintf("clusters[%s].cluster.%s", name, f) }
	u, err := url.Parse(c.Server)
	switch {
	case c.Server == "":
		return &fieldError{field("server"), "is not set"}
	case err != nil || u.Host == "":
		return &fieldError{field("server"), "is not a URL with a host"}
	case u.Scheme != "https":
		return &fieldError{field("server"), fmt.Sprintf("uses %s: only https is allowed", u.Scheme)}
	case u.User != nil:
		return &fieldError{field("server"), "carries user info"}
	case c.InsecureSkipTLSVerify:
		return &fieldError{field("insecure-skip-tls-verify"), "is not allowed: the server must be verified"}
	case c.CertificateAuthority != "":
		return &fieldError{field("certificate-authority"), "is a file reference: give certificate-authority-data"}
	case c.ProxyURL != "":
		return &fieldError{field("proxy-url"), "is not allowed"}
	}
	return nil
}

// checkUser refuses a user whose credentials are not inline, or who acts as someone else.
func checkUser(name string, u *clientcmdapi.AuthInfo) error {
	field := func(f string) string { return fmt.Sprintf("users[%s].user.%s", name, f) }
	switch {
	case u.Exec != nil:
		return &fieldError{field("exec"), "runs a program: give inline credentials"}
	case u.AuthProvider != nil:
		return &fieldError{field("auth-provider"), "is not allowed: give inline credentials"}
	case u.TokenFile != "":
		return &fieldError{field("tokenFile"), "is a file reference: give token"}
	case u.ClientCertificate != "":
		return &fieldError{field("client-certificate"), "is a file reference: give client-certificate-data"}
	case u.ClientKey != "":
		return &fieldError{field("client-key"), "is a file reference: give client-key-data"}
	case u.Impersonate != "" || u.ImpersonateUID != "" || len(u.ImpersonateGroups) > 0 || len(u.ImpersonateUserExtra) > 0:
		return &fieldError{field("act-as"), "impersonation is not allowed"}
	}
	return nil
}
