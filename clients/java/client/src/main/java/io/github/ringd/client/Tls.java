package io.github.ringd.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
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
import java.util.Base64;
import java.util.Collection;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;

/** TLS contexts from PEM files, for https:// servers with a private CA or mutual TLS. */
public final class Tls {
  private Tls() {}

  private static final Pattern KEY =
      Pattern.compile("-----BEGIN ([A-Z ]*)PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END");

  /**
   * A context trusting the CA certificates in caFile (null: the system roots) and, when certFile
   * and keyFile are given, presenting that certificate chain and its PKCS#8 key ({@code BEGIN
   * PRIVATE KEY}, EC or RSA) for mutual TLS ({@code ringd serve --tls-client-ca}).
   *
   * @throws IllegalArgumentException when a file does not load; the key's contents never reach the
   *     message
   */
  public static SSLContext fromPemFiles(
      @Nullable Path caFile, @Nullable Path certFile, @Nullable Path keyFile) {
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException(
          "a client certificate needs both its certificate and its key file");
    }
    try {
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      if (caFile == null) {
        tmf.init((KeyStore) null);
      } else {
        KeyStore trust = emptyStore();
        int i = 0;
        for (Certificate c : certificates(caFile)) {
          trust.setCertificateEntry("ca-" + i++, c);
        }
        tmf.init(trust);
      }
      KeyManagerFactory kmf = null;
      if (certFile != null && keyFile != null) {
        KeyStore keys = emptyStore();
        char[] pass = new char[0];
        keys.setKeyEntry(
            "client",
            privateKey(keyFile),
            pass,
            certificates(certFile).toArray(new Certificate[0]));
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, pass);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException("TLS files: " + e.getMessage(), e);
    }
  }

  private static KeyStore emptyStore() throws GeneralSecurityException, IOException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    return ks;
  }

  private static Collection<? extends Certificate> certificates(Path file)
      throws IOException, GeneralSecurityException {
    byte[] pem = Files.readAllBytes(file);
    Collection<? extends Certificate> certs =
        CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
    if (certs.isEmpty()) {
      throw new IllegalArgumentException("certificate file " + file + " holds no PEM certificate");
    }
    return certs;
  }

  private static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
    String text = Files.readString(file, StandardCharsets.US_ASCII);
    Matcher m = KEY.matcher(text);
    if (!m.find()) {
      throw new IllegalArgumentException("key file " + file + " holds no PEM private key");
    }
    if (!m.group(1).isEmpty()) {
      throw new IllegalArgumentException(
          "key file "
              + file
              + " holds a "
              + m.group(1).trim()
              + " key; convert it to PKCS#8 (openssl pkcs8 -topk8 -nocrypt)");
    }
    byte[] der = Base64.getMimeDecoder().decode(m.group(2));
    for (String alg : new String[] {"EC", "RSA", "Ed25519"}) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new IllegalArgumentException("key file " + file + ": not an EC, RSA or Ed25519 key");
  }
}
