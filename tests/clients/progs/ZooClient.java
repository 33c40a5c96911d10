// One client of the zoo in Java: fetch each URL in turn, read it all.
// usage: java ZooClient httpclient|urlconnection CAFILE URL...
// httpclient: java.net.http.HttpClient (its defaults: HTTP/2 where the
//   server offers it, a selector thread, keep-alive), synchronous send().
// urlconnection: java.net.HttpURLConnection (blocking sockets, keep-alive
//   cache).
// Exit status 0 when every URL answered 2xx, 1 otherwise.
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class ZooClient {
	// an SSL context that trusts the certificate in the PEM file only
	static SSLContext trusting(String pem) throws Exception {
		Certificate cert;
		try (InputStream in = new FileInputStream(pem)) {
			cert = CertificateFactory.getInstance("X.509").generateCertificate(in);
		}
		KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
		store.load(null, null);
		store.setCertificateEntry("zoo", cert);
		TrustManagerFactory tmf = TrustManagerFactory.getInstance(
			TrustManagerFactory.getDefaultAlgorithm());
		tmf.init(store);
		SSLContext ctx = SSLContext.getInstance("TLS");
		ctx.init(null, tmf.getTrustManagers(), null);
		return ctx;
	}

	public static void main(String[] args) throws Exception {
		SSLContext ctx = trusting(args[1]);
		boolean ok = true;
		if (args[0].equals("httpclient")) {
			HttpClient client = HttpClient.newBuilder().sslContext(ctx).build();
			for (int i = 2; i < args.length; i++) {
				HttpResponse<byte[]> r = client.send(
					HttpRequest.newBuilder(URI.create(args[i])).build(),
					HttpResponse.BodyHandlers.ofByteArray());
				ok &= r.statusCode() / 100 == 2;
			}
		} else {
			HttpsURLConnection.setDefaultSSLSocketFactory(ctx.getSocketFactory());
			byte[] buf = new byte[65536];
			for (int i = 2; i < args.length; i++) {
				HttpURLConnection c = (HttpURLConnection) new URL(args[i]).openConnection();
				try (InputStream in = c.getInputStream()) {
					while (in.read(buf) >= 0)
						;
				}
				ok &= c.getResponseCode() / 100 == 2;
			}
		}
		System.exit(ok ? 0 : 1);
	}
}
