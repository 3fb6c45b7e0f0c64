package io.github.ringd.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway CA with a server and a client certificate for localhost and 127.0.0.1, as PEM files
 * (P-256 keys in PKCS#8), made with the {@code openssl} command in a temporary directory; {@link
 * #close} deletes them. For {@code ringd serve --tls-cert … --tls-key … [--tls-client-ca …]} and
 * the clients that reach it.
 */
public final class Pki implements AutoCloseable {
  private final Path dir;

  private Pki(Path dir) {
    this.dir = dir;
  }

  /** Makes the CA and both leaves (one hour either side of now). */
  public static Pki create() {
    Path dir = Processes.tempDir("ringd-pki-");
    Pki pki = new Pki(dir);
    try {
      pki.openssl(
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-keyout",
          "ca.key",
          "-out",
          "ca.pem",
          "-days",
          "1",
          "-subj",
          "/CN=ringd test CA",
          "-addext",
          "basicConstraints=critical,CA:TRUE",
          "-addext",
          "keyUsage=critical,keyCertSign");
      pki.leaf("server", "serverAuth", 2);
      pki.leaf("client", "clientAuth", 3);
    } catch (RuntimeException | Error e) {
      pki.close();
      throw e;
    }
    return pki;
  }

  private void leaf(String name, String usage, int serial) {
    openssl(
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        name + ".key",
        "-out",
        name + ".csr",
        "-subj",
        "/CN=localhost");
    write(
        name + ".ext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
            + "keyUsage=critical,digitalSignature\n"
            + "extendedKeyUsage="
            + usage
            + "\n");
    openssl(
        "x509",
        "-req",
        "-in",
        name + ".csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-set_serial",
        Integer.toString(serial),
        "-days",
        "1",
        "-out",
        name + ".pem",
        "-extfile",
        name + ".ext");
  }

  /** The CA certificate. */
  public Path ca() {
    return dir.resolve("ca.pem");
  }

  /** The server's certificate. */
  public Path serverCert() {
    return dir.resolve("server.pem");
  }

  /** The server's key. */
  public Path serverKey() {
    return dir.resolve("server.key");
  }

  /** The client's certificate. */
  public Path clientCert() {
    return dir.resolve("client.pem");
  }

  /** The client's key. */
  public Path clientKey() {
    return dir.resolve("client.key");
  }

  /** {@code ringd serve} arguments for HTTPS, with mutual TLS (the CA trusted) when mutual. */
  public String[] serverArgs(boolean mutual) {
    List<String> args =
        new ArrayList<>(
            List.of("--tls-cert", serverCert().toString(), "--tls-key", serverKey().toString()));
    if (mutual) {
      args.add("--tls-client-ca");
      args.add(ca().toString());
    }
    return args.toArray(new String[0]);
  }

  /** A context trusting the CA, presenting the client certificate when withClientCert. */
  public SSLContext sslContext(boolean withClientCert) {
    try {
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(ca())) {
        trust.setCertificateEntry("ca", cf.generateCertificate(in));
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance("TLS");
      if (!withClientCert) {
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
      }
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      Certificate cert;
      try (InputStream in = Files.newInputStream(clientCert())) {
        cert = cf.generateCertificate(in);
      }
      char[] pass = "test".toCharArray();
      keys.setKeyEntry("client", privateKey(clientKey()), pass, new Certificate[] {cert});
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, pass);
      ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("loading the test PKI", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads a PKCS#8 EC key ("PRIVATE KEY" PEM). */
  private static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
    String text = Files.readString(pem, StandardCharsets.US_ASCII);
    String b64 = text.replaceAll("-----(BEGIN|END) PRIVATE KEY-----", "").replaceAll("\\s", "");
    return KeyFactory.getInstance("EC")
        .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(b64)));
  }

  private void write(String name, String text) {
    try {
      Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void openssl(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add("openssl");
    cmd.addAll(List.of(args));
    ProcessBuilder pb = Processes.builder(cmd).directory(dir.toFile()).redirectErrorStream(true);
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", cmd) + " failed:\n" + new String(out, StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("running openssl (Debian: apt-get install openssl)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running openssl", e);
    }
  }

  /** Deletes the files. */
  @Override
  public void close() {
    Processes.deleteTree(dir);
  }
}
