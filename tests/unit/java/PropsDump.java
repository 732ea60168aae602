// Loads each file given on the command line with java.util.Properties.load(InputStream)
// -- the call Kafka's Utils.loadProps makes for connect-mirror-maker.sh -- and prints
// "== <n>" followed by one JSON array ["key","value"] per entry, sorted by key.
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Properties;
import java.util.TreeSet;

public class PropsDump {
    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < args.length; i++) {
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(Paths.get(args[i]))) {
                p.load(in);
            }
            System.out.println("== " + i);
            for (String k : new TreeSet<>(p.stringPropertyNames())) {
                System.out.println("[" + json(k) + "," + json(p.getProperty(k)) + "]");
            }
        }
    }
}
