import Keysmith
import Testing

struct RetrievalKeyCandidatesTests {
    @Test func camelCaseIdentifier() {
        #expect(KeyRetriever.candidates(for: "apiKey") == ["apiKey", "apikey", "APIKEY", "api_key"])
    }

    @Test func snakeCaseIdentifier() {
        #expect(KeyRetriever.candidates(for: "api_key") == ["api_key", "API_KEY", "apiKey"])
    }

    @Test func environmentSuffixIsRemovedSecond() {
        #expect(
            KeyRetriever.candidates(for: "apple_pay_secret_test") == [
                "apple_pay_secret_test", "apple_pay_secret", "APPLE_PAY_SECRET_TEST", "applePaySecretTest",
            ])
        #expect(KeyRetriever.candidates(for: "token_prod").prefix(2) == ["token_prod", "token"])
        #expect(KeyRetriever.candidates(for: "API_KEY_TEST").prefix(2) == ["API_KEY_TEST", "API_KEY"])
    }

    @Test func suffixesAreRemovedOnlyAtTheEnd() {
        // The seed's replace-anywhere would turn this into "mying_key".
        #expect(!KeyRetriever.candidates(for: "my_testing_key").contains("mying_key"))
        #expect(KeyCandidates.strippingEnvironmentSuffix("my_testing_key") == nil)
        #expect(KeyCandidates.strippingEnvironmentSuffix("_test") == nil)
    }

    @Test func nothingFuzzy() {
        let candidates = KeyRetriever.candidates(for: "api")
        #expect(candidates == ["api", "API"])
        #expect(!candidates.contains("api_key"))
        #expect(!KeyRetriever.candidates(for: "api_key").contains("api_key_test"))
    }

    @Test func duplicatesAreRemovedKeepingTheFirst() {
        #expect(KeyRetriever.candidates(for: "token") == ["token", "TOKEN"])
        #expect(KeyRetriever.candidates(for: "TOKEN") == ["TOKEN", "token"])
        #expect(KeyRetriever.candidates(for: "") == [])
    }

    @Test func caseConversions() {
        #expect(KeyCandidates.snakeCase(fromCamelCase: "APIKey") == "api_key")
        #expect(KeyCandidates.snakeCase(fromCamelCase: "userID") == "user_id")
        #expect(KeyCandidates.snakeCase(fromCamelCase: "aesKey256") == "aes_key256")
        #expect(KeyCandidates.snakeCase(fromCamelCase: "APIKEY") == nil)
        #expect(KeyCandidates.camelCase(fromSnakeCase: "API_KEY") == "apiKey")
        #expect(KeyCandidates.camelCase(fromSnakeCase: "apple_pay_secret") == "applePaySecret")
        #expect(KeyCandidates.camelCase(fromSnakeCase: "_private") == nil)
    }
}
