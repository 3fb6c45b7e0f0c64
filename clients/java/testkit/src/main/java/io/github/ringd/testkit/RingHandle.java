package io.github.ringd.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The REST API of one ring, called as an operator would. Every helper but {@link #request} fails
 * the calling test unless the server answers as expected, showing the answer.
 */
public final class RingHandle {
  /** The most keys one {@code POST …/lookup} takes (api.md). */
  public static final int MAX_LOOKUP_KEYS = 10_000;

  static final ObjectMapper JSON = new ObjectMapper();

  private final String base;
  private final String name;
  private final @Nullable String token;
  private final HttpClient http;

  RingHandle(String base, String name, @Nullable String token, HttpClient http) {
    this.base = base;
    this.name = name;
    this.token = token;
    this.http = http;
  }

  /** The same ring, its requests sent with {@code Authorization: Bearer token}. */
  public RingHandle withToken(String token) {
    return new RingHandle(base, name, token, http);
  }

  /** The ring's name. */
  public String name() {
    return name;
  }

  /** The server's base URL. */
  public String baseUrl() {
    return base;
  }

  /**
   * Sends body (serialized as JSON; null for none) to path under {@code /v1/rings/{ring}} ("" for
   * the ring itself, "/changes", "/lookup?key=a") and returns the answer, whatever its status.
   */
  public Response request(String method, String path, @Nullable Object body) {
    byte[] bytes = null;
    if (body != null) {
      try {
        bytes = JSON.writeValueAsBytes(body);
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException("body is not serializable as JSON: " + body, e);
      }
    }
    return send(method, "/v1/rings/" + name + path, bytes);
  }

  /** Sends a request to any path of the server (e.g. "/metrics"), whatever its answer. */
  public Response send(String method, String absolutePath, byte @Nullable [] body) {
    HttpRequest.Builder rb =
        HttpRequest.newBuilder(URI.create(base + absolutePath))
            .timeout(Duration.ofSeconds(60))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body));
    if (body != null) {
      rb.header("Content-Type", "application/json");
    }
    if (token != null) {
      rb.header("Authorization", "Bearer " + token);
    }
    try {
      HttpResponse<byte[]> r = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
      return new Response(r.statusCode(), r.headers(), r.body());
    } catch (IOException e) {
      throw new AssertionError(method + " " + base + absolutePath + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + method + " " + absolutePath, e);
    }
  }

  /** {@link #request}, failing the test unless the status is want; the answer as JSON. */
  public JsonNode call(String method, String path, @Nullable Object body, int want) {
    Response r = request(method, path, body);
    if (r.status() != want) {
      fail(method + " " + name + path + ": " + r.status() + ", want " + want + ": " + r.text());
    }
    return r.json();
  }

  /** {@code GET path} under the ring, which must answer 200. */
  public JsonNode get(String path) {
    return call("GET", path, null, 200);
  }

  /** Creates the ring with config ({@code PUT /v1/rings/{ring}}, 201); its first version. */
  public long create(Map<String, ?> config) {
    return call("PUT", "", config, 201).path("version").asLong();
  }

  /** Applies ops as one version ({@code POST …/changes}, 200) and returns it. */
  public long change(List<? extends Map<String, ?>> ops) {
    return call("POST", "/changes", Map.of("ops", ops), 200).path("version").asLong();
  }

  /** {@link #change(List)} of the ops given. */
  @SafeVarargs
  public final long change(Map<String, ?>... ops) {
    // Copied element by element: handing the array itself on is what -Xlint:varargs flags.
    List<Map<String, ?>> list = new ArrayList<>(ops.length);
    for (Map<String, ?> op : ops) {
      list.add(op);
    }
    return change(list);
  }

  /** An upsert of the node record given (id, weight, state, zone, address, hash_key, labels). */
  public static Map<String, Object> upsert(Map<String, ?> node) {
    Map<String, Object> op = new LinkedHashMap<>();
    op.put("op", "upsert");
    op.put("node", node);
    return op;
  }

  /** An upsert of an active node of weight 1. */
  public static Map<String, Object> upsert(String id) {
    return upsert(Map.of("id", id));
  }

  /** An upsert of an active node of the weight given. */
  public static Map<String, Object> upsert(String id, int weight) {
    return upsert(Map.of("id", id, "weight", weight));
  }

  /** A removal of node id. */
  public static Map<String, Object> remove(String id) {
    return Map.of("op", "remove", "id", id);
  }

  /**
   * The server's owner of each key at version ({@code POST …/lookup}), null where no node is
   * active.
   */
  public List<@Nullable String> lookup(long version, List<byte[]> keys) {
    List<@Nullable String> owners = new ArrayList<>(keys.size());
    for (List<String> list : replicas(version, keys, 1)) {
      owners.add(list.isEmpty() ? null : list.get(0));
    }
    return owners;
  }

  /** The server's owner of one key at version, null where no node is active. */
  public @Nullable String lookup(long version, byte[] key) {
    return lookup(version, List.of(key)).get(0);
  }

  /**
   * The server's preference list of each key at version, up to n nodes, owner first ({@code POST
   * …/lookup} with {@code "replicas": n}, in batches of {@link #MAX_LOOKUP_KEYS}). Every key goes
   * as {@code keys_b64}, so keys that are not UTF-8 are placed as the bytes they are; each answer
   * must echo its key.
   */
  public List<List<String>> replicas(long version, List<byte[]> keys, int n) {
    Base64.Encoder b64 = Base64.getEncoder();
    List<List<String>> lists = new ArrayList<>(keys.size());
    for (int start = 0; start < keys.size(); start += MAX_LOOKUP_KEYS) {
      List<byte[]> batch = keys.subList(start, Math.min(start + MAX_LOOKUP_KEYS, keys.size()));
      List<String> sent = new ArrayList<>(batch.size());
      for (byte[] k : batch) {
        sent.add(b64.encodeToString(k));
      }
      JsonNode out =
          call("POST", "/lookup", Map.of("keys_b64", sent, "version", version, "replicas", n), 200);
      JsonNode results = out.path("results");
      if (out.path("version").asLong() != version || results.size() != batch.size()) {
        fail(
            "lookup at version "
                + version
                + " answered version "
                + out.path("version")
                + " with "
                + results.size()
                + " results for "
                + batch.size()
                + " keys");
      }
      for (int i = 0; i < results.size(); i++) {
        JsonNode r = results.get(i);
        if (!sent.get(i).equals(r.path("key_b64").asText())) {
          fail(
              "lookup result "
                  + i
                  + " is for key_b64 "
                  + r.path("key_b64")
                  + ", sent "
                  + sent.get(i));
        }
        List<String> list = new ArrayList<>();
        r.path("replicas").forEach(x -> list.add(x.asText()));
        JsonNode owner = r.path("owner");
        boolean hasOwner = owner.isTextual();
        if (hasOwner != !list.isEmpty() || (hasOwner && !list.get(0).equals(owner.asText()))) {
          fail(
              "lookup at version "
                  + version
                  + ": owner "
                  + owner
                  + " and replicas "
                  + list
                  + " disagree");
        }
        lists.add(List.copyOf(list));
      }
    }
    return lists;
  }

  @Override
  public String toString() {
    return "ring " + name + " on " + base;
  }
}
