import java.lang.management.ManagementFactory;
import java.lang.management.RuntimeMXBean;
import java.util.Map;
import java.util.TreeSet;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * Integration-test JMX client: connects to host:port over RMI like any JMX console would, prints
 * the MBean names matching a pattern and the JVM's system properties.
 * Usage: java JmxProbe HOST PORT PATTERN
 */
public class JmxProbe {
    public static void main(String[] args) throws Exception {
        String url = "service:jmx:rmi:///jndi/rmi://" + args[0] + ":" + args[1] + "/jmxrmi";
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
            MBeanServerConnection server = connector.getMBeanServerConnection();
            for (ObjectName name : new TreeSet<>(server.queryNames(new ObjectName(args[2]), null))) {
                System.out.println("mbean\t" + name);
            }
            RuntimeMXBean runtime = ManagementFactory.newPlatformMXBeanProxy(
                server, ManagementFactory.RUNTIME_MXBEAN_NAME, RuntimeMXBean.class);
            for (Map.Entry<String, String> e : runtime.getSystemProperties().entrySet()) {
                System.out.println("property\t" + e.getKey() + "\t" + e.getValue());
            }
        }
    }
}
