package io.github.ringd.client;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The small JSON bodies the client reads and writes (problems, keep-alives, leases, acks), as plain
 * trees: maps, lists, strings, longs, doubles, booleans and nulls. Snapshots are read by the
 * placement core.
 */
final class Json {
  private Json() {}

  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build())
          .build();

  /** The tree of text; throws IOException when it is not one JSON value. */
  static @Nullable Object parse(byte[] text) throws IOException {
    try (JsonParser p = FACTORY.createParser(text)) {
      JsonToken first = p.nextToken();
      if (first == null) {
        throw new IOException("empty body");
      }
      Object v = value(p);
      if (p.nextToken() != null) {
        throw new IOException("text after the JSON value");
      }
      return v;
    }
  }

  /** The object text holds; throws IOException when it is no JSON object. */
  static Map<String, @Nullable Object> object(byte[] text) throws IOException {
    Object v = parse(text);
    if (!(v instanceof Map)) {
      throw new IOException("not a JSON object");
    }
    @SuppressWarnings("unchecked") // value() builds every object as such a map
    Map<String, @Nullable Object> m = (Map<String, @Nullable Object>) v;
    return m;
  }

  private static @Nullable Object value(JsonParser p) throws IOException {
    JsonToken t = p.currentToken();
    return switch (t) {
      case START_OBJECT -> {
        Map<String, @Nullable Object> m = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          p.nextToken();
          m.put(name, value(p));
        }
        yield m;
      }
      case START_ARRAY -> {
        List<@Nullable Object> l = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          l.add(value(p));
        }
        yield l;
      }
      case VALUE_STRING -> p.getText();
      case VALUE_NUMBER_INT ->
          p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
              ? (Object) p.getDoubleValue()
              : (Object) p.getLongValue();
      case VALUE_NUMBER_FLOAT -> p.getDoubleValue();
      case VALUE_TRUE -> true;
      case VALUE_FALSE -> false;
      case VALUE_NULL -> null;
      default -> throw new IOException("unexpected " + t);
    };
  }

  /** The string at key, null when absent or not a string. */
  static @Nullable String string(Map<String, @Nullable Object> m, String key) {
    return m.get(key) instanceof String s ? s : null;
  }

  /** The integer at key, null when absent or not an integer. */
  static @Nullable Long integer(Map<String, @Nullable Object> m, String key) {
    return m.get(key) instanceof Long l ? l : null;
  }

  /** value (maps, lists, strings, numbers, booleans, null) as JSON. */
  static byte[] write(@Nullable Object value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = FACTORY.createGenerator(out)) {
      write(g, value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static void write(JsonGenerator g, @Nullable Object v) throws IOException {
    if (v == null) {
      g.writeNull();
    } else if (v instanceof Map<?, ?> m) {
      g.writeStartObject();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        g.writeFieldName(String.valueOf(e.getKey()));
        write(g, e.getValue());
      }
      g.writeEndObject();
    } else if (v instanceof List<?> l) {
      g.writeStartArray();
      for (Object x : l) {
        write(g, x);
      }
      g.writeEndArray();
    } else if (v instanceof String s) {
      g.writeString(s);
    } else if (v instanceof Long || v instanceof Integer) {
      g.writeNumber(((Number) v).longValue());
    } else if (v instanceof Boolean b) {
      g.writeBoolean(b);
    } else {
      throw new IllegalArgumentException("not a JSON value: " + v.getClass());
    }
  }
}
