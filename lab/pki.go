package main

// The lab's PKI, in pure Go (no openssl): one CA that signs the apiserver's
// serving cert, one client CA that signs the admin and kube-scheduler client
// certs, a
// service-account signing key and the static admin token. Everything is
// created once per DIR and reused on restart, so kubeconfigs handed to
// running clients stay valid across lab restarts.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// pki names the files under DIR the apiserver and the kubeconfigs use.
type pki struct {
	caCert, caKey             string // DIR/ca.crt: the CA clients trust
	servingCert, servingKey   string
	clientCACert, clientCAKey string
	adminCert, adminKey       string // CN lab-admin-cert, O system:masters
	schedCert, schedKey       string // CN system:kube-scheduler, as kubeadm makes it
	saKey                     string // EC private key, both SA key flags
	tokenFile                 string // DIR/token: the admin bearer token
	tokenCSV                  string // --token-auth-file
	token                     string
}

const (
	adminUser     = "lab-admin"
	adminCertUser = "lab-admin-cert"
	mastersGroup  = "system:masters"
)

func ensurePKI(dir string) (*pki, error) {
	pd := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pd, 0o700); err != nil {
		return nil, err
	}
	p := &pki{
		caCert:       filepath.Join(dir, "ca.crt"),
		caKey:        filepath.Join(pd, "ca.key"),
		servingCert:  filepath.Join(pd, "apiserver.crt"),
		servingKey:   filepath.Join(pd, "apiserver.key"),
		clientCACert: filepath.Join(pd, "client-ca.crt"),
		clientCAKey:  filepath.Join(pd, "client-ca.key"),
		adminCert:    filepath.Join(pd, "admin.crt"),
		adminKey:     filepath.Join(pd, "admin.key"),
		schedCert:    filepath.Join(pd, "scheduler.crt"),
		schedKey:     filepath.Join(pd, "scheduler.key"),
		saKey:        filepath.Join(pd, "sa.key"),
		tokenFile:    filepath.Join(dir, "token"),
		tokenCSV:     filepath.Join(pd, "tokens.csv"),
	}
	// A marker written last: a half-written PKI (crash mid-way) is redone
	// completely rather than mixed with new pieces.
	done := filepath.Join(pd, "complete")
	if _, err := os.Stat(done); err == nil {
		b, err := os.ReadFile(p.tokenFile)
		if err != nil {
			return nil, err
		}
		p.token = strings.TrimSpace(string(b))
		return p, nil
	}
	if err := p.generate(); err != nil {
		return nil, err
	}
	return p, os.WriteFile(done, nil, 0o600)
}

func (p *pki) generate() error {
	now := time.Now().Add(-time.Hour) // tolerate small clock skew
	until := now.Add(10 * 365 * 24 * time.Hour)

	ca, caKey, err := newCA("kube-lab-ca", now, until)
	if err != nil {
		return err
	}
	if err := writeCertKey(p.caCert, p.caKey, ca, caKey); err != nil {
		return err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now,
		NotAfter:    until,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// Names an in-cluster client would verify, plus loopback.
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	}
	if err := signAndWrite(serving, ca, caKey, p.servingCert, p.servingKey); err != nil {
		return err
	}

	clientCA, clientCAKey, err := newCA("kube-lab-client-ca", now, until)
	if err != nil {
		return err
	}
	if err := writeCertKey(p.clientCACert, p.clientCAKey, clientCA, clientCAKey); err != nil {
		return err
	}
	client := func(cn string, groups []string, certPath, keyPath string) error {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: cn, Organization: groups},
			NotBefore:   now,
			NotAfter:    until,
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		return signAndWrite(tmpl, clientCA, clientCAKey, certPath, keyPath)
	}
	if err := client(adminCertUser, []string{mastersGroup}, p.adminCert, p.adminKey); err != nil {
		return err
	}
	// kubeadm's scheduler.conf user: no group, so only the bootstrap
	// ClusterRoles bound to system:kube-scheduler authorize it.
	if err := client("system:kube-scheduler", nil, p.schedCert, p.schedKey); err != nil {
		return err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(p.saKey, saKey); err != nil {
		return err
	}

	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	p.token = hex.EncodeToString(tok)
	if err := os.WriteFile(p.tokenFile, []byte(p.token+"\n"), 0o600); err != nil {
		return err
	}
	// token,user,uid,"groups"
	csv := fmt.Sprintf("%s,%s,%s,\"%s\"\n", p.token, adminUser, adminUser, mastersGroup)
	return os.WriteFile(p.tokenCSV, []byte(csv), 0o600)
}

func newCA(cn string, notBefore, notAfter time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return c, key, err
}

func signAndWrite(tmpl, ca *x509.Certificate, caKey crypto.Signer, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return writeCertKey(certPath, keyPath, c, key)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n.Add(n, big.NewInt(1))
}

func writeCertKey(certPath, keyPath string, c *x509.Certificate, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}), 0o644); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// writeKubeconfigs writes DIR/kubeconfig (bearer token),
// DIR/kubeconfig-cert (client certificate) and DIR/scheduler.conf (the
// system:kube-scheduler client certificate, kubeadm's scheduler.conf), all
// with context "lab".
func writeKubeconfigs(dir string, port int, p *pki) error {
	ca, err := os.ReadFile(p.caCert)
	if err != nil {
		return err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	mk := func(user string, auth *clientcmdapi.AuthInfo) *clientcmdapi.Config {
		c := clientcmdapi.NewConfig()
		c.Clusters["lab"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
		c.AuthInfos[user] = auth
		c.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: user, Namespace: "default"}
		c.CurrentContext = "lab"
		return c
	}
	if err := clientcmd.WriteToFile(*mk(adminUser, &clientcmdapi.AuthInfo{Token: p.token}), filepath.Join(dir, "kubeconfig")); err != nil {
		return err
	}
	withCert := func(user, certPath, keyPath, file string) error {
		cert, err := os.ReadFile(certPath)
		if err != nil {
			return err
		}
		key, err := os.ReadFile(keyPath)
		if err != nil {
			return err
		}
		if len(cert) == 0 || len(key) == 0 {
			return fmt.Errorf("empty cert or key for %s", user)
		}
		auth := &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
		return clientcmd.WriteToFile(*mk(user, auth), filepath.Join(dir, file))
	}
	if err := withCert(adminCertUser, p.adminCert, p.adminKey, "kubeconfig-cert"); err != nil {
		return err
	}
	if _, err := os.Stat(p.schedCert); errors.Is(err, os.ErrNotExist) {
		return nil // a lab directory made before the scheduler's certificate was
	}
	return withCert("system:kube-scheduler", p.schedCert, p.schedKey, "scheduler.conf")
}
